//go:build integration

package kwok

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// A pod annotated sim-crash-loop keeps crashing and restarting, as a
// kubelet shows a container that exits at once: waiting in
// CrashLoopBackOff after an exit with code 1, then running again with a
// higher restartCount, and it never ends its simulated training.
func TestCrashLoopAnnotationRestartsTheContainer(t *testing.T) {
	pod := makePod("crash-loop").OnNode(cpuNode).
		Annotation(simkwok.SimCrashLoopAnnotation, "true").
		Annotation(simkwok.SimDurationAnnotation, "1s").
		Create(t)

	backOff := waitForPod(t, pod, "in CrashLoopBackOff", func(p *corev1.Pod) bool { return waitingReason(p) == "CrashLoopBackOff" })
	last := backOff.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || last.ExitCode != 1 || last.Reason != "Error" {
		t.Errorf("last termination = %+v, want exit code 1 (Error)", last)
	}
	if podConditionTrue(backOff, corev1.PodReady) {
		t.Errorf("a crash-looping pod is Ready: %+v", backOff.Status.Conditions)
	}
	first := backOff.Status.ContainerStatuses[0].RestartCount

	restarted := waitForPod(t, pod, "restarted", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount > first
	})
	waitForPod(t, restarted, "back in CrashLoopBackOff after the restart", func(p *corev1.Pod) bool {
		return waitingReason(p) == "CrashLoopBackOff" && p.Status.ContainerStatuses[0].RestartCount > first
	})
	// Its one-second training is long over, yet it loops on.
	got := waitForPod(t, pod, "still running", podPhaseIs(corev1.PodRunning))
	if got.Status.Phase != corev1.PodRunning {
		t.Errorf("phase = %s, want Running: a crash loop never ends", got.Status.Phase)
	}
}

func waitingReason(p *corev1.Pod) string {
	if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Waiting == nil {
		return ""
	}
	return p.Status.ContainerStatuses[0].State.Waiting.Reason
}
