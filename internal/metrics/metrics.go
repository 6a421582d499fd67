// Package metrics defines every metric the operator exports, in one place:
// the Kubeflow-compatible training_operator_jobs_* counters and backfill's
// own backfill_* metrics. They are registered on controller-runtime's
// registry, so the manager's /metrics endpoint serves them.
//
// Labels come from a small fixed set, each with a bounded set of values
// (the lists below); no metric carries a job or pod name. Job state is a
// gauge computed from the cache at scrape time, so nothing per job is kept
// in memory beyond the cache itself.
//
// Transitions of a job (created, succeeded, failed, restarting) are counted
// from the difference between the status a pass found and the status it
// wrote, and only once that write succeeded: a write is made against the
// job's resourceVersion, so every transition is counted exactly once, and a
// pass retried after a conflict never counts twice.
//
// Reconcile errors are not duplicated here: controller-runtime exports
// controller_runtime_reconcile_errors_total{controller="tfjob-controller"}
// and controller_runtime_reconcile_total{controller,result}.
package metrics

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// Framework is the value of the Kubeflow counters' framework label.
const Framework = "tensorflow"

// RestartCause is the value of backfill_replica_restarts_total's cause label.
type RestartCause string

// Restart causes.
const (
	// CauseExitCode: the operator recreated a pod that failed with a
	// retryable exit code (128-255, a signal) under restartPolicy ExitCode.
	CauseExitCode RestartCause = "exit_code"
	// CauseOnFailure: the operator recreated a pod that failed under
	// restartPolicy OnFailure or Always.
	CauseOnFailure RestartCause = "on_failure"
	// CauseInPlace: the kubelet restarted a container inside a pod, under
	// restartPolicy OnFailure or Always; the pod itself lives on.
	CauseInPlace RestartCause = "in_place"
)

// RestartCauses are all the values of the cause label.
var RestartCauses = []RestartCause{CauseExitCode, CauseOnFailure, CauseInPlace}

// ReasonOther is the reason label of a disruption whose reason is none of
// DisruptionReasons, such as one a newer Kubernetes writes.
const ReasonOther = "Other"

// DisruptionReasons are the values of backfill_disruptions_total's reason
// label: the disruption reasons of internal/colocation, then ReasonOther.
var DisruptionReasons = []string{
	colocation.ReasonPreemptionByScheduler,
	colocation.ReasonEvictionByEvictionAPI,
	colocation.ReasonDeletionByTaintManager,
	colocation.ReasonDeletionByPodGC,
	colocation.ReasonTerminationByKubelet,
	colocation.ReasonDeletedWhileRunning,
	colocation.ReasonReclaimedForOnline,
	ReasonOther,
}

// ReplicaTypeOther is the replica_type label of a pod whose replica-type
// label is not a TFJob replica type.
const ReplicaTypeOther = "other"

// ReplicaTypes are the values of the replica_type label: the lowercase
// TFJob replica types, as on the pods' training.kubeflow.org/replica-type
// label, then ReplicaTypeOther.
var ReplicaTypes = func() []string {
	var types []string
	for _, t := range kubeflowv1.ReplicaTypes {
		types = append(types, strings.ToLower(string(t)))
	}
	return append(types, ReplicaTypeOther)
}()

// Results are the values of backfill_tfjob_duration_seconds's result label.
const (
	ResultSucceeded = "succeeded"
	ResultFailed    = "failed"
)

// PhasePending is the phase of a job with no condition yet.
const PhasePending = "Pending"

// PhaseUnknown is the phase of a job whose last condition is of a type the
// TFJob API does not define.
const PhaseUnknown = "Unknown"

// Phases are the values of backfill_tfjobs's phase label, PhaseUnknown
// aside: Pending, then the condition types, as the State column of
// `kubectl get tfjobs` shows them.
var Phases = []string{
	PhasePending,
	string(kubeflowv1.JobCreated),
	string(kubeflowv1.JobRunning),
	string(kubeflowv1.JobRestarting),
	string(kubeflowv1.JobSucceeded),
	string(kubeflowv1.JobFailed),
	string(kubeflowv1.JobSuspended),
}

// The metrics' names, for the alert rules and dashboards built on them.
// docs/observability.md lists them with their types, labels and meaning.
const (
	NameJobsCreated     = "training_operator_jobs_created_total"
	NameJobsDeleted     = "training_operator_jobs_deleted_total"
	NameJobsSuccessful  = "training_operator_jobs_successful_total"
	NameJobsFailed      = "training_operator_jobs_failed_total"
	NameJobsRestarted   = "training_operator_jobs_restarted_total"
	NameJobs            = "backfill_tfjobs"
	NamePodsCreated     = "backfill_pods_created_total"
	NamePodsDeleted     = "backfill_pods_deleted_total"
	NameReplicaRestarts = "backfill_replica_restarts_total"
	NameDisruptions     = "backfill_disruptions_total"
	NameTimeToRunning   = "backfill_tfjob_time_to_running_seconds"
	NameDuration        = "backfill_tfjob_duration_seconds"
)

// Kubeflow v1's counters, labelled job_namespace and framework, with v1's
// meaning; ObservePass and the TFJob informer's deletions count them.
var (
	jobsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameJobsCreated,
		Help: "TFJobs created: counted once per job, when the operator first marks it Created.",
	}, []string{"job_namespace", "framework"})
	jobsDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameJobsDeleted,
		Help: "TFJobs deleted, by the operator after ttlSecondsAfterFinished or by anyone else.",
	}, []string{"job_namespace", "framework"})
	jobsSuccessful = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameJobsSuccessful,
		Help: "TFJobs that succeeded.",
	}, []string{"job_namespace", "framework"})
	jobsFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameJobsFailed,
		Help: "TFJobs that failed.",
	}, []string{"job_namespace", "framework"})
	jobsRestarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameJobsRestarted,
		Help: "Times a TFJob entered the Restarting state.",
	}, []string{"job_namespace", "framework"})
)

// backfill's own counters and histograms; the backfill_tfjobs gauge is
// jobPhases, computed at scrape time.
var (
	podsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NamePodsCreated,
		Help: "Replica pods the operator created, by replica type.",
	}, []string{"replica_type"})
	podsDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NamePodsDeleted,
		Help: "Replica pods the operator deleted (restarts, clean-up, suspension), by replica type.",
	}, []string{"replica_type"})
	replicaRestarts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameReplicaRestarts,
		Help: "Restarts of TFJob replicas charged to backoffLimit, by cause: exit_code, on_failure (pod recreated by the operator) or in_place (container restarted by the kubelet).",
	}, []string{"cause"})
	disruptions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameDisruptions,
		Help: "TFJob replica pods ended by the cluster (preemption, eviction, node pressure or loss, deletion) and recreated without charge to backoffLimit, by reason.",
	}, []string{"reason"})
	timeToRunning = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    NameTimeToRunning,
		Help:    "Time from a TFJob's creation until the operator first saw every replica running (or done), by namespace.",
		Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 21600, 86400},
	}, []string{"namespace"})
	duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    NameDuration,
		Help:    "Time from a TFJob's startTime to its completionTime, by result: succeeded or failed.",
		Buckets: []float64{10, 30, 60, 300, 600, 1800, 3600, 7200, 14400, 28800, 57600, 86400, 172800, 345600, 604800},
	}, []string{"result"})
)

// collectors are every metric above, in the order of docs/observability.md.
var collectors = []prometheus.Collector{
	jobsCreated, jobsDeleted, jobsSuccessful, jobsFailed, jobsRestarted,
	jobPhases, jobState, colocationState,
	podsCreated, podsDeleted, replicaRestarts, disruptions,
	timeToRunning, duration, reportJobs,
	reclaimTarget, reclaimOnlinePeak, reclaimUsageAge, reclaimFrozen, reclaimSourceUp,
	reclaimSyncDuration, reclaimNodeWrites, reclaimEvictions,
	onlineP99, reclaimOnlineHold, reclaimOnlineActions,
	gpuLoanLent, gpuLoanNextReturn, gpuLoanLendableUntil, gpuLoanReturns, gpuLoanMissedReturns, gpuLoanOnlineWait, gpuLoanGPUSeconds, gpuLoanLostSeconds,
}

var registerOnce sync.Once

// Register registers every metric on controller-runtime's registry, once
// per process, and starts the counters and histograms whose labels do not
// name a namespace at zero, so that rate() sees their first increment.
func Register() {
	registerOnce.Do(func() {
		ctrlmetrics.Registry.MustRegister(collectors...)
		initialise()
	})
}

// initialise creates the series of every label value known in advance.
func initialise() {
	for _, t := range ReplicaTypes {
		podsCreated.WithLabelValues(t)
		podsDeleted.WithLabelValues(t)
	}
	for _, c := range RestartCauses {
		replicaRestarts.WithLabelValues(string(c))
	}
	for _, r := range DisruptionReasons {
		disruptions.WithLabelValues(r)
	}
	duration.WithLabelValues(ResultSucceeded)
	duration.WithLabelValues(ResultFailed)
	for _, r := range BatchResources {
		reclaimEvictions.WithLabelValues(r, EvictionEvicted)
		reclaimEvictions.WithLabelValues(r, EvictionRefused)
	}
	for _, a := range OnlineActions {
		reclaimOnlineActions.WithLabelValues(a)
	}
}

// replicaTypeLabel bounds a pod's replica-type label to ReplicaTypes.
func replicaTypeLabel(value string) string {
	for _, t := range ReplicaTypes {
		if value == t {
			return t
		}
	}
	return ReplicaTypeOther
}

// disruptionLabel bounds a disruption reason to DisruptionReasons.
func disruptionLabel(reason string) string {
	for _, r := range DisruptionReasons {
		if reason == r {
			return r
		}
	}
	return ReasonOther
}

// phaseLabel bounds a job's last condition type to Phases and PhaseUnknown.
func phaseLabel(ctype kubeflowv1.JobConditionType) string {
	if ctype == "" {
		return PhasePending
	}
	for _, p := range Phases {
		if string(ctype) == p {
			return p
		}
	}
	return PhaseUnknown
}
