package colocation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// failedPod is a pod that failed with the given status reason and
// conditions.
func failedPod(reason string, conditions ...corev1.PodCondition) *corev1.Pod {
	return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: reason, Conditions: conditions}}
}

func disruptionTarget(status corev1.ConditionStatus, reason string) corev1.PodCondition {
	return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: status, Reason: reason}
}

func TestDisruptionOf(t *testing.T) {
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodFailed"}
	cases := map[string]struct {
		pod           *corev1.Pod
		wantReason    string
		wantDisrupted bool
	}{
		"preempted by the scheduler": {
			pod:        failedPod("", ready, disruptionTarget(corev1.ConditionTrue, "PreemptionByScheduler")),
			wantReason: ReasonPreemptionByScheduler, wantDisrupted: true,
		},
		"evicted through the Eviction API": {
			pod:        failedPod("", disruptionTarget(corev1.ConditionTrue, "EvictionByEvictionAPI")),
			wantReason: ReasonEvictionByEvictionAPI, wantDisrupted: true,
		},
		"deleted by the taint manager": {
			pod:        failedPod("", disruptionTarget(corev1.ConditionTrue, "DeletionByTaintManager")),
			wantReason: ReasonDeletionByTaintManager, wantDisrupted: true,
		},
		"deleted by pod GC": {
			pod:        failedPod("", disruptionTarget(corev1.ConditionTrue, "DeletionByPodGC")),
			wantReason: ReasonDeletionByPodGC, wantDisrupted: true,
		},
		"terminated by the kubelet": {
			pod:        failedPod("", disruptionTarget(corev1.ConditionTrue, "TerminationByKubelet")),
			wantReason: ReasonTerminationByKubelet, wantDisrupted: true,
		},
		"a DisruptionTarget without reason is the kubelet's": {
			pod:        failedPod("", disruptionTarget(corev1.ConditionTrue, "")),
			wantReason: ReasonTerminationByKubelet, wantDisrupted: true,
		},
		"the DisruptionTarget reason wins over the kubelet's status reason": {
			pod:        failedPod("Evicted", disruptionTarget(corev1.ConditionTrue, "EvictionByEvictionAPI")),
			wantReason: ReasonEvictionByEvictionAPI, wantDisrupted: true,
		},
		"node-pressure eviction (status reason Evicted)": {
			pod:        failedPod("Evicted"),
			wantReason: ReasonTerminationByKubelet, wantDisrupted: true,
		},
		"critical-pod preemption (status reason Preempting)": {
			pod:        failedPod("Preempting"),
			wantReason: ReasonTerminationByKubelet, wantDisrupted: true,
		},
		"graceful node shutdown (status reason Terminated)": {
			pod:        failedPod("Terminated"),
			wantReason: ReasonTerminationByKubelet, wantDisrupted: true,
		},
		"node shutdown (status reason Shutdown)": {
			pod:        failedPod("Shutdown"),
			wantReason: ReasonTerminationByKubelet, wantDisrupted: true,
		},
		"node shutdown (status reason NodeShutdown)": {
			pod:        failedPod("NodeShutdown"),
			wantReason: ReasonTerminationByKubelet, wantDisrupted: true,
		},
		"a plain failed pod is not a disruption": {
			pod: failedPod("", ready),
		},
		"a pod past its activeDeadlineSeconds is not a disruption": {
			pod: failedPod("DeadlineExceeded"),
		},
		"a pod out of memory is not a disruption": {
			pod: failedPod("OOMKilled"),
		},
		"a DisruptionTarget that is False is not a disruption": {
			pod: failedPod("", disruptionTarget(corev1.ConditionFalse, "PreemptionByScheduler")),
		},
		"a DisruptionTarget that is False does not hide a kubelet eviction": {
			pod:        failedPod("Evicted", disruptionTarget(corev1.ConditionFalse, "PreemptionByScheduler")),
			wantReason: ReasonTerminationByKubelet, wantDisrupted: true,
		},
		"a pod with no status": {
			pod: &corev1.Pod{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reason, disrupted := DisruptionOf(tc.pod)
			if diff := cmp.Diff(tc.wantReason, reason); diff != "" {
				t.Errorf("reason (-want +got):\n%s", diff)
			}
			if disrupted != tc.wantDisrupted {
				t.Errorf("disrupted = %v, want %v", disrupted, tc.wantDisrupted)
			}
		})
	}
}
