package tfjob

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// endedPodAction is what the operator does with a replica pod that failed.
type endedPodAction int

const (
	// failJob: the failure is permanent under the replica's restart policy.
	failJob endedPodAction = iota
	// restartReplica: recreate the pod and charge backoffLimit.
	restartReplica
	// restartDisrupted: recreate the pod without charge; the cluster, not
	// the training, stopped it.
	restartDisrupted
)

// onEndedPod decides what a pod that failed or is being deleted means.
// Disruptions restart under any policy: the pod carries a DisruptionTarget
// condition or a kubelet eviction reason, or was deleted by someone while it
// ran (a genuine failure that was deleted afterwards stays a failure).
// Otherwise OnFailure and Always restart; ExitCode restarts for
// exit codes 128-255 (killed by a signal, e.g. OOM or SIGTERM) and fails
// for 1-127; Never fails.
func onEndedPod(policy kubeflowv1.RestartPolicy, pod *corev1.Pod) (endedPodAction, string) {
	if reason, ok := colocation.DisruptionOf(pod); ok {
		return restartDisrupted, reason
	}
	if stoppedByDeletion(pod) {
		return restartDisrupted, colocation.ReasonDeletedWhileRunning
	}
	switch policy {
	case kubeflowv1.RestartPolicyOnFailure, kubeflowv1.RestartPolicyAlways:
		return restartReplica, ""
	case kubeflowv1.RestartPolicyExitCode:
		if code, ok := exitCode(pod); !ok || code >= 128 {
			return restartReplica, ""
		}
	}
	return failJob, ""
}

// restartEnded applies the restart policy to a replica pod that ended, or
// is being deleted, before it succeeded: the first pass to see it counts it
// (its UID joins counted) and replaces it, released and deleted. It reports
// whether the pod failed for good. A pod with no restart left, or a dynamic
// worker that ended, is neither counted nor replaced.
func (p *plan) restartEnded(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, pod *corev1.Pod, counted sets.Set[string], scan *replicaScan) (failed bool) {
	if !counted.Has(string(pod.UID)) {
		action, reason := onEndedPod(job.Spec.TFReplicaSpecs[rtype].RestartPolicy, pod)
		switch {
		case action == restartDisrupted:
			p.status.Disruptions++
			scan.disrupted[reason]++
		case action == restartReplica && backoffExhausted(job, p.status.Restarts+scan.inPlaceRestarts):
			scan.backoffExceeded = true
			return false
		case action == restartReplica:
			p.status.Restarts += 1 + ContainerRestarts(pod)
			scan.restarted++
		case rtype == kubeflowv1.ReplicaTypeWorker && job.Spec.EnableDynamicWorker:
			// Dynamic workers may come and go, as in Kubeflow v1.
			return false
		default:
			return true
		}
		counted.Insert(string(pod.UID))
	}
	p.release(pod)
	p.delete(pod)
	return false
}

// announceRestarts words the pass's restarts as events and as the reason
// of the Restarting condition; a disruption, when there is one, names it.
func (s *replicaScan) announceRestarts(job *kubeflowv1.TFJob) {
	if s.restarted > 0 {
		s.restartReason = reasonRestarting
		s.restartMessage = jobMessage(job, fmt.Sprintf("is restarting because %d replica(s) failed", s.restarted))
		s.events = append(s.events, event{corev1.EventTypeWarning, reasonRestarting, s.restartMessage})
	}
	for _, reason := range sortedKeys(s.disrupted) {
		msg := jobMessage(job, fmt.Sprintf("is restarting %d replica(s) ended by %s; not charged to backoffLimit", s.disrupted[reason], reason))
		s.events = append(s.events, event{corev1.EventTypeWarning, reason, msg})
		s.restartReason, s.restartMessage = reason, msg
	}
}

// backoffExhausted reports whether one more restart would exceed the
// job's backoffLimit.
func backoffExhausted(job *kubeflowv1.TFJob, restarts int32) bool {
	limit := job.Spec.RunPolicy.BackoffLimit
	return limit != nil && restarts >= *limit
}

// backoffLimitExceeded says why the job failed when its restarts, counted
// and in place, exceed backoffLimit, or a replica failed with no restart
// left.
func backoffLimitExceeded(job *kubeflowv1.TFJob, st *kubeflowv1.JobStatus, scan replicaScan) (string, bool) {
	limit := job.Spec.RunPolicy.BackoffLimit
	restarts := st.Restarts + scan.inPlaceRestarts
	if limit == nil || (!scan.backoffExceeded && restarts <= *limit) {
		return "", false
	}
	why := fmt.Sprintf("it restarted %d times, more than backoffLimit %d", restarts, *limit)
	if scan.backoffExceeded {
		why = fmt.Sprintf("a replica failed after %d restarts, the most backoffLimit %d allows", restarts, *limit)
	}
	return jobMessage(job, "has failed because "+why), true
}

// restartCounts are the status fields a pass's restarts change. A pass
// that finishes the job restores them: its ended pods are cleaned up, not
// restarted, so nothing is counted.
type restartCounts struct {
	restarts, disruptions int32
	countedPods           []string
}

func restartCountsOf(st *kubeflowv1.JobStatus) restartCounts {
	return restartCounts{st.Restarts, st.Disruptions, st.CountedPods}
}

func (c restartCounts) restore(st *kubeflowv1.JobStatus) {
	st.Restarts, st.Disruptions, st.CountedPods = c.restarts, c.disruptions, c.countedPods
}

// stoppedByDeletion reports whether a pod is being deleted and had not
// failed before the deletion was asked for.
func stoppedByDeletion(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp == nil {
		return false
	}
	if pod.Status.Phase != corev1.PodFailed {
		return true
	}
	asked := pod.DeletionTimestamp.Time
	if g := pod.DeletionGracePeriodSeconds; g != nil {
		asked = asked.Add(-time.Duration(*g) * time.Second)
	}
	finished, ok := finishedAt(pod)
	return !ok || !finished.Before(asked)
}

// finishedAt is when the tensorflow container last terminated.
func finishedAt(pod *corev1.Pod) (time.Time, bool) {
	if t := terminated(pod); t != nil {
		return t.FinishedAt.Time, true
	}
	return time.Time{}, false
}

// exitCode is the exit code of the tensorflow container's last run.
func exitCode(pod *corev1.Pod) (int32, bool) {
	if t := terminated(pod); t != nil {
		return t.ExitCode, true
	}
	return 0, false
}

// terminated is the last termination of the tensorflow container, or nil.
func terminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name != kubeflowv1.ContainerName {
			continue
		}
		if t := s.State.Terminated; t != nil {
			return t
		}
		return s.LastTerminationState.Terminated
	}
	return nil
}

// ContainerRestarts is how often the kubelet restarted the pod's containers
// in place (restartPolicy OnFailure or Always).
func ContainerRestarts(pod *corev1.Pod) int32 {
	var n int32
	for _, s := range pod.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}
