//go:build integration

package report

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestPreemptedInPart: a job one of whose two workers the scheduler
// preempted shows Restarting, for that reason, until the replacement runs,
// however the other worker runs; then Running again.
func TestPreemptedInPart(t *testing.T) {
	ns := newNamespace(t)
	job, pods := runningJob(t, ns, "preempted", 2)
	apiServer.SetPodStatus(t, pods[1], func(s *corev1.PodStatus) {
		s.Phase = corev1.PodFailed
		s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"})
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeflowv1.ContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, FinishedAt: metav1.Now()}}}}
	})
	restarting := func(st kubeflowv1.JobStatus) bool {
		c := lastCondition(st)
		return c.Type == kubeflowv1.JobRestarting && c.Status == corev1.ConditionTrue && c.Reason == "PreemptionByScheduler"
	}
	waitForJob(t, job, "Restarting for the preemption", restarting)
	replacement := waitForNewPod(t, pods[1])
	framework.Consistently(t, "the job left Restarting while a worker is not running", quiet, func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job)
		return err == nil && !restarting(got.Status), err
	})
	runPod(t, replacement)
	got := waitForJob(t, job, "Running again", func(st kubeflowv1.JobStatus) bool {
		return lastCondition(st).Type == kubeflowv1.JobRunning
	})
	if got.Status.Disruptions != 1 || got.Status.Restarts != 0 {
		t.Errorf("disruptions %d, restarts %d; want 1 disruption, not charged as a restart", got.Status.Disruptions, got.Status.Restarts)
	}
}
