// Package gpuloan runs backfill's GPU loans (internal/tide has the pure
// decisions) against the cluster: every interval, on the leader, it
//
//	pools     groups the GPU nodes by their GPUs' model (pools.go)
//	forecast  finds the online GPU workloads, Deployments and StatefulSets
//	          whose pods request GPUs, and their replicas over the next
//	          day and a half: the backfill.dev/gpu-schedule annotation,
//	          else a KEDA ScaledObject's cron triggers (read through the
//	          dynamic client: KEDA is no dependency), else their history
//	          in Prometheus, else their current replicas (workloads.go,
//	          keda.go, history.go)
//	loans     treats the running GPU pods of TFJobs as loans (loans.go)
//	returns   gives a loan's pods the stop notice at its notice time, with
//	          the deadline when online needs the GPUs; at the deadline, or
//	          as soon as the job reports a checkpoint made after the notice
//	          (the handshake), pauses the job through runPolicy.suspend and
//	          evicts its pods (act.go)
//	resumes   a job it paused once tide.Admit says a loan lasts long
//	          enough to reach a checkpoint (act.go)
//	counts    online pods left waiting for a GPU training holds: a missed
//	          return (waiting.go)
//
// Only a pool with a forecast (a schedule or a history for at least one of
// its online workloads) has its loans managed: elsewhere nothing is known
// of the morning, and priority preemption alone gives online work its
// GPUs, as it does without this package.
//
// A paused job is suspended the way Kueue suspends one (runPolicy.suspend),
// so the operator's own suspension creates no pods, charges nothing to
// backoffLimit and says so in the job's Suspended condition; the job's
// LoanAnnotation says the manager paused it, and the manager only ever
// resumes the jobs it paused.
package gpuloan
