//go:build integration

package kwok

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The real scheduler places a GPU pod on the GPU node, with no toleration,
// and kwok starts it there.
func TestGPUPodRunsOnTheGPUNode(t *testing.T) {
	pod := makePod("one-gpu").GPUs(1).Create(t)

	got := waitForPod(t, pod, "Running", podPhaseIs(corev1.PodRunning))
	if got.Spec.NodeName != gpuNode {
		t.Errorf("scheduled onto %q, want %q", got.Spec.NodeName, gpuNode)
	}
	if got.Status.PodIP == "" {
		t.Error("the running pod has no IP")
	}
	if len(got.Status.ContainerStatuses) != 1 || !got.Status.ContainerStatuses[0].Ready || got.Status.ContainerStatuses[0].State.Running == nil {
		t.Errorf("container statuses = %+v, want one running, ready container", got.Status.ContainerStatuses)
	}
	if !podConditionTrue(got, corev1.PodReady) {
		t.Errorf("conditions = %+v, want Ready", got.Status.Conditions)
	}
}

// A pod asking for more GPUs than any node has stays Pending, and the
// scheduler says why.
func TestPodAskingForTooManyGPUsStaysPending(t *testing.T) {
	pod := makePod("nine-gpus").GPUs(nodeGPUs + 1).Create(t)

	got := waitForPod(t, pod, "unschedulable for lack of GPUs", func(p *corev1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return strings.Contains(c.Message, "Insufficient nvidia.com/gpu")
			}
		}
		return false
	})
	if got.Status.Phase != corev1.PodPending || got.Spec.NodeName != "" {
		t.Errorf("phase %s on node %q, want Pending and unbound", got.Status.Phase, got.Spec.NodeName)
	}
}

func podConditionTrue(p *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
