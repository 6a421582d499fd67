package tfjob

import (
	"time"

	corev1 "k8s.io/api/core/v1"

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

// containerRestarts is how often the kubelet restarted the pod's containers
// in place (restartPolicy OnFailure or Always).
func containerRestarts(pod *corev1.Pod) int32 {
	var n int32
	for _, s := range pod.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}
