package tfjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

func TestOnEndedPod(t *testing.T) {
	failedWith := func(code int32) *corev1.Pod {
		return makePod(j, Worker, 0).phase(corev1.PodFailed).exitCode(code).obj()
	}
	// lastRun is a pod whose tensorflow container waits to restart after
	// exiting with code.
	lastRun := func(code int32) *corev1.Pod {
		pod := makePod(j, Worker, 0).phase(corev1.PodFailed).obj()
		pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		pod.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}
		return pod
	}
	// withSidecar is a pod whose tensorflow container exited with tf and a
	// sidecar, listed first, with sidecar.
	withSidecar := func(sidecar, tf int32) *corev1.Pod {
		pod := failedWith(tf)
		pod.Status.ContainerStatuses = append([]corev1.ContainerStatus{{
			Name:  "sidecar",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: sidecar}},
		}}, pod.Status.ContainerStatuses...)
		return pod
	}
	cases := map[string]struct {
		policy     kubeflowv1.RestartPolicy
		pod        *corev1.Pod
		wantAction endedPodAction
		wantReason string
	}{
		"Never, exit 1":                           {policy: Never, pod: failedWith(1), wantAction: failJob},
		"Never, exit 137":                         {policy: Never, pod: failedWith(137), wantAction: failJob},
		"OnFailure, exit 1":                       {policy: OnFailure, pod: failedWith(1), wantAction: restartReplica},
		"Always, exit 1":                          {policy: Always, pod: failedWith(1), wantAction: restartReplica},
		"ExitCode, exit 1":                        {policy: ExitCode, pod: failedWith(1), wantAction: failJob},
		"ExitCode, exit 127":                      {policy: ExitCode, pod: failedWith(127), wantAction: failJob},
		"ExitCode, exit 128":                      {policy: ExitCode, pod: failedWith(128), wantAction: restartReplica},
		"ExitCode, exit 137":                      {policy: ExitCode, pod: failedWith(137), wantAction: restartReplica},
		"ExitCode, exit 255":                      {policy: ExitCode, pod: failedWith(255), wantAction: restartReplica},
		"ExitCode, no exit code known":            {policy: ExitCode, pod: makePod(j, Worker, 0).phase(corev1.PodFailed).obj(), wantAction: restartReplica},
		"ExitCode, last run exit 2":               {policy: ExitCode, pod: lastRun(2), wantAction: failJob},
		"ExitCode, last run exit 143":             {policy: ExitCode, pod: lastRun(143), wantAction: restartReplica},
		"ExitCode reads the tensorflow container": {policy: ExitCode, pod: withSidecar(137, 1), wantAction: failJob},
		"ExitCode ignores a sidecar's exit 1":     {policy: ExitCode, pod: withSidecar(1, 137), wantAction: restartReplica},
		"Never, preempted": {
			policy: Never, pod: makePod(j, Worker, 0).phase(corev1.PodFailed).exitCode(143).disruption(colocation.ReasonPreemptionByScheduler).obj(),
			wantAction: restartDisrupted, wantReason: colocation.ReasonPreemptionByScheduler,
		},
		"ExitCode, exit 1 while drained": {
			policy: ExitCode, pod: makePod(j, Worker, 0).phase(corev1.PodFailed).exitCode(1).disruption(colocation.ReasonEvictionByEvictionAPI).obj(),
			wantAction: restartDisrupted, wantReason: colocation.ReasonEvictionByEvictionAPI,
		},
		"Never, evicted by the kubelet": {
			policy: Never, pod: makePod(j, Worker, 0).phase(corev1.PodFailed).statusReason("Evicted").obj(),
			wantAction: restartDisrupted, wantReason: colocation.ReasonTerminationByKubelet,
		},
		"Never, running pod being deleted": {
			policy: Never, pod: makePod(j, Worker, 0).phase(corev1.PodRunning).deleting(ago(time.Second), 30).obj(),
			wantAction: restartDisrupted, wantReason: colocation.ReasonDeletedWhileRunning,
		},
		"Never, pending pod being deleted": {
			policy: Never, pod: makePod(j, Worker, 0).deleting(ago(time.Second), 30).obj(),
			wantAction: restartDisrupted, wantReason: colocation.ReasonDeletedWhileRunning,
		},
		"Never, failed before its deletion was asked for": {
			policy: Never, pod: makePod(j, Worker, 0).phase(corev1.PodFailed).exitCodeAt(1, ago(11*time.Second)).deleting(ago(10*time.Second), 30).obj(),
			wantAction: failJob,
		},
		"Never, failed when its deletion was asked for": {
			policy: Never, pod: makePod(j, Worker, 0).phase(corev1.PodFailed).exitCodeAt(143, ago(10*time.Second)).deleting(ago(10*time.Second), 30).obj(),
			wantAction: restartDisrupted, wantReason: colocation.ReasonDeletedWhileRunning,
		},
		"Never, failed after its deletion was asked for": {
			policy: Never, pod: makePod(j, Worker, 0).phase(corev1.PodFailed).exitCodeAt(143, ago(9*time.Second)).deleting(ago(10*time.Second), 30).obj(),
			wantAction: restartDisrupted, wantReason: colocation.ReasonDeletedWhileRunning,
		},
		"Never, failed and deleted, end unknown": {
			policy: Never, pod: makePod(j, Worker, 0).phase(corev1.PodFailed).deleting(ago(10*time.Second), 30).obj(),
			wantAction: restartDisrupted, wantReason: colocation.ReasonDeletedWhileRunning,
		},
		"Never, failed before a deletion without grace period": {
			policy: Never, pod: func() *corev1.Pod {
				pod := makePod(j, Worker, 0).phase(corev1.PodFailed).exitCodeAt(1, ago(2*time.Second)).obj()
				asked := metav1.NewTime(ago(time.Second))
				pod.DeletionTimestamp = &asked
				return pod
			}(),
			wantAction: failJob,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			action, reason := onEndedPod(tc.policy, tc.pod)
			if diff := cmp.Diff(tc.wantAction, action); diff != "" {
				t.Errorf("action (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReason, reason); diff != "" {
				t.Errorf("reason (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContainerRestarts(t *testing.T) {
	cases := map[string]struct {
		counts []int32
		want   int32
	}{
		"no container status": {},
		"one container":       {counts: []int32{3}, want: 3},
		"every container":     {counts: []int32{3, 2}, want: 5},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{}
			for i, n := range tc.counts {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: string(rune('a' + i)), RestartCount: n})
			}
			if got := ContainerRestarts(pod); got != tc.want {
				t.Errorf("ContainerRestarts = %d, want %d", got, tc.want)
			}
		})
	}
}
