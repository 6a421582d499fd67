package metrics

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Pass is what one reconcile pass of a job wrote, as the metrics see it.
type Pass struct {
	// Job is the job as the pass found it; Job.Status is the status the
	// write replaced.
	Job *kubeflowv1.TFJob
	// Status is the status the pass wrote.
	Status *kubeflowv1.JobStatus
	// Now is the time of the pass.
	Now time.Time
	// Restarts counts the ended pods the pass recreates and charges to
	// backoffLimit, by cause: CauseExitCode or CauseOnFailure. Other
	// causes are ignored; in-place restarts are counted from pod updates.
	Restarts map[RestartCause]int
	// Disruptions counts the pods ended by the cluster that the pass
	// recreates, by disruption reason.
	Disruptions map[string]int
}

// ObservePass counts the transitions of a pass. Call it only once the
// pass's status write succeeded (or was not needed, when Status equals
// Job.Status): that write was made against the job's resourceVersion, so
// the difference between Job.Status and Status happened exactly once.
func ObservePass(p Pass) {
	before, after := &p.Job.Status, p.Status
	ns := p.Job.Namespace
	if became(before, after, kubeflowv1.JobCreated) {
		jobsCreated.WithLabelValues(ns, Framework).Inc()
	}
	if became(before, after, kubeflowv1.JobSucceeded) {
		jobsSuccessful.WithLabelValues(ns, Framework).Inc()
		observeDuration(after, ResultSucceeded)
	}
	if became(before, after, kubeflowv1.JobFailed) {
		jobsFailed.WithLabelValues(ns, Framework).Inc()
		observeDuration(after, ResultFailed)
	}
	if state(before) != kubeflowv1.JobRestarting && state(after) == kubeflowv1.JobRestarting {
		jobsRestarted.WithLabelValues(ns, Framework).Inc()
	}
	if firstAllRunning(p.Job, before, after) {
		timeToRunning.WithLabelValues(ns).Observe(max(p.Now.Sub(p.Job.CreationTimestamp.Time).Seconds(), 0))
	}
	for _, cause := range []RestartCause{CauseExitCode, CauseOnFailure} {
		if n := p.Restarts[cause]; n > 0 {
			replicaRestarts.WithLabelValues(string(cause)).Add(float64(n))
		}
	}
	for reason, n := range p.Disruptions {
		if n > 0 {
			disruptions.WithLabelValues(disruptionLabel(reason)).Add(float64(n))
		}
	}
}

// observeDuration records a finished job's time from startTime to
// completionTime.
func observeDuration(st *kubeflowv1.JobStatus, result string) {
	if st.StartTime == nil || st.CompletionTime == nil {
		return
	}
	duration.WithLabelValues(result).Observe(max(st.CompletionTime.Sub(st.StartTime.Time).Seconds(), 0))
}

// became reports whether a condition turned True between two statuses.
func became(before, after *kubeflowv1.JobStatus, ctype kubeflowv1.JobConditionType) bool {
	return !isTrue(before, ctype) && isTrue(after, ctype)
}

func isTrue(st *kubeflowv1.JobStatus, ctype kubeflowv1.JobConditionType) bool {
	for _, c := range st.Conditions {
		if c.Type == ctype {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// state is the job's state: the type of its last condition, "" for none.
func state(st *kubeflowv1.JobStatus) kubeflowv1.JobConditionType {
	if len(st.Conditions) == 0 {
		return ""
	}
	return st.Conditions[len(st.Conditions)-1].Type
}

// firstAllRunning reports whether a pass saw every replica of an
// unfinished job running or done for the first time. The status keeps no
// mark of it, so "first" is read as: no replica has been recreated yet
// (restarts and disruptions are 0). A job whose replicas were recreated
// before they all ran is therefore not observed, and neither is a return
// to all running after a restart; a job suspended after it ran (its pods
// stopped without a restart) is observed again when it runs again.
func firstAllRunning(job *kubeflowv1.TFJob, before, after *kubeflowv1.JobStatus) bool {
	if isTrue(after, kubeflowv1.JobSucceeded) || isTrue(after, kubeflowv1.JobFailed) {
		return false
	}
	if after.Restarts > 0 || after.Disruptions > 0 {
		return false
	}
	return !allRunning(job, before) && allRunning(job, after)
}

// allRunning reports whether every replica of the job is active (its pod
// runs) or has succeeded, as a status records it.
func allRunning(job *kubeflowv1.TFJob, st *kubeflowv1.JobStatus) bool {
	total := int32(0)
	for rtype, spec := range job.Spec.TFReplicaSpecs {
		want := spec.ReplicaCount()
		if want <= 0 {
			continue
		}
		total += want
		rs := st.ReplicaStatuses[rtype]
		if rs == nil || rs.Active+rs.Succeeded < want {
			return false
		}
	}
	return total > 0
}
