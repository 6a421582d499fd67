// Package tide is backfill's GPU loans: whole GPUs of online inference lent
// to training while the online forecast does not need them, and returned
// before it does, each return with a checkpoint deadline.
//
// Online inference scales down at night and up in the morning, and the
// morning is predictable: a KEDA ScaledObject's cron triggers state it, an
// annotation on the workload can state or override it, and a workload with
// neither repeats its own daily shape. This package turns those sources
// into a forecast of online GPUs per pool (nodes of one GPU resource and
// model) and decides the loans against it. It is pure: no Kubernetes
// client, no clock of its own, so that the manager's controller that reads
// the sources (internal/gpuloan) and the simulation of test/bench/tidal run
// the same decisions.
//
//	replicas  per workload: a CronSchedule (KEDA's cron triggers or the
//	          backfill.dev/gpu-schedule annotation) or a History (the same
//	          time of day over the last days, plus a margin)
//	demand    per pool: the sum of replicas x GPUs per pod, each rise moved
//	          earlier by the workload's warm-up (PoolDemand)
//	need      the demand taken Settings.Lead early (autoscalers often scale
//	          up before the schedule), raised throughout by what online
//	          holds now beyond it (a spike is taken to last)
//	lendable  capacity - need - lent, for as long as the need allows (Lendable)
//	admission a job starts on lent GPUs only if its loan reaches a
//	          checkpoint (Admit)
//	returns   where the need rises into lent GPUs, stop just enough loans:
//	          none told too late, the fewest GPUs, the cheapest checkpoints,
//	          the least work at risk; notice = deadline - the job's
//	          checkpoint time, deadline = when online needs the GPUs (Returns)
//	next loan when the returned GPUs are free again (NextLoan)
//
// Times are absolute (time.Time); cron expressions and times of day are read
// in the workload's own time zone, so daylight-saving changes move them as
// they move the workload's users.
package tide
