package doctor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// What a pod on reclaimed capacity counts against a quota: its zero cpu
// and memory requests, its template's limits, its batch resources and
// GPUs by their requests.
func TestQuotaChargeOfAReclaimedPod(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
		Requests: resources("cpu", "0", "memory", "0", "backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "1Gi", "nvidia.com/gpu", "1"),
		Limits:   resources("cpu", "2", "memory", "2Gi", "backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "1Gi", "nvidia.com/gpu", "1"),
	}}}}}
	want := resources(
		"pods", "1", "count/pods", "1",
		"cpu", "0", "requests.cpu", "0", "limits.cpu", "2",
		"memory", "0", "requests.memory", "0", "limits.memory", "2Gi",
		"requests.backfill.dev/batch-cpu", "1000", "requests.backfill.dev/batch-memory", "1Gi", "requests.nvidia.com/gpu", "1",
	)
	if diff := cmp.Diff(want, quotaCharge(pod), quantities); diff != "" {
		t.Errorf("charge (-want +got):\n%s", diff)
	}
	team := quota("team", resources("requests.cpu", "4", "limits.cpu", "8", "requests.memory", "8Gi", "limits.memory", "16Gi"), nil)
	if missing := missingFromContainers(&team, pod); len(missing) != 0 {
		t.Errorf("a quota on cpu and memory finds %v unstated; the zero requests and the limits state them all", missing)
	}
	if bestEffort(pod) {
		t.Error("a reclaimed pod with its template's limits is BestEffort; want Burstable")
	}
}
