//go:build integration

package kueue

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/queueing"
	"github.com/backfill-dev/backfill/test/framework"
)

// Kueue preempts a lower-priority job for a higher one by suspending it
// and restoring its templates in one update. backfill gives the running
// pods the stop notice, stops them, and reports no active replica, which
// is when Kueue releases the quota. The higher job runs; the lower one is
// requeued, resumes with a new startTime, and succeeds. The disruption it
// suffered before keeps its count through everything Kueue writes.
func TestPreemptedJobResumes(t *testing.T) {
	ctx := context.Background()
	q := newQueue(t, 2)
	low := newJob(q, "low", 2, "20s").priority(lowPriority).create(t)
	pods := waitRunning(t, low, 2)

	// A disruption before the preemption: an eviction of one worker.
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pods[0].Name, Namespace: pods[0].Namespace}}
	if err := apiServer.Client.SubResource("eviction").Create(ctx, &pods[0], eviction); err != nil {
		t.Fatalf("Evicting %s: %v", pods[0].Name, err)
	}
	waitJob(t, low, "counting the eviction", func(j *kubeflowv1.TFJob) bool { return j.Status.Disruptions == 1 })
	waitRunning(t, low, 2)
	first := waitJob(t, low, "started", func(j *kubeflowv1.TFJob) bool { return j.Status.StartTime != nil })

	preempting := time.Now()
	high := newJob(q, "high", 2, "6s").priority(highPriority).create(t)
	framework.Eventually(t, "the stop notice on a pod of "+low.Name, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, low)
		for i := range pods {
			if pods[i].Annotations[colocation.StopReasonAnnotation] != "" {
				return true, nil
			}
		}
		return false, err
	})
	wl := waitWorkload(t, low, "evicted for the higher job", func(w *queueing.Workload) bool {
		c := w.Condition(queueing.ConditionEvicted)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == "Preempted"
	})
	t.Logf("Preempted: %s", workloadCondition(wl, queueing.ConditionEvicted))
	suspendedLow := waitJob(t, low, "suspended with no active replica and its templates restored", func(j *kubeflowv1.TFJob) bool {
		_, admittedSelector := j.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.NodeSelector[poolLabel]
		return suspended(j) && !admittedSelector && activeReplicas(j) == 0 && conditionTrue(j, kubeflowv1.JobSuspended)
	})
	if suspendedLow.Status.StartTime != nil {
		t.Errorf("Suspended job keeps startTime %s", suspendedLow.Status.StartTime)
	}

	waitRunning(t, high, 2)
	t.Logf("The higher job ran %v after its creation, with a stop notice of %v for the lower one", time.Since(preempting).Round(100*time.Millisecond), stopNotice)
	waitJob(t, high, "succeeded", func(j *kubeflowv1.TFJob) bool { return conditionTrue(j, kubeflowv1.JobSucceeded) })
	waitRunning(t, low, 2)
	resumed := waitJob(t, low, "resumed", func(j *kubeflowv1.TFJob) bool { return j.Status.StartTime != nil && !suspended(j) })
	if !resumed.Status.StartTime.After(first.Status.StartTime.Time) {
		t.Errorf("Resumed job's startTime %s, want after the first start %s", resumed.Status.StartTime, first.Status.StartTime)
	}
	done := waitJob(t, low, "succeeded after its resume", func(j *kubeflowv1.TFJob) bool { return conditionTrue(j, kubeflowv1.JobSucceeded) })
	if done.Status.Disruptions != 1 {
		t.Errorf("Disruptions = %d after Kueue's updates, want the 1 eviction", done.Status.Disruptions)
	}
}

func activeReplicas(j *kubeflowv1.TFJob) int32 {
	var n int32
	for _, rs := range j.Status.ReplicaStatuses {
		n += rs.Active
	}
	return n
}

// With waitForPodsReady on, a job admitted whose pods cannot all run in
// time is evicted and requeued: backfill removes its pending pods when
// Kueue suspends it, and makes them again when Kueue admits it anew.
func TestPodsReadyTimeoutRequeues(t *testing.T) {
	q := newQueue(t, 2)
	b := newJob(q, "unplaceable", 2, "5s")
	// A node selector no node matches, beside the flavor's own.
	b.job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.NodeSelector = map[string]string{"backfill.dev/no-such-pool": "x"}
	job := b.create(t)
	var firstPod corev1.Pod
	framework.Eventually(t, "pending pods of "+job.Name, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, job)
		if len(pods) > 0 {
			firstPod = pods[0]
		}
		return len(pods) == 2, err
	})
	wl := waitWorkload(t, job, "evicted for pods not ready in time", func(w *queueing.Workload) bool {
		c := w.Condition(queueing.ConditionEvicted)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == "PodsReadyTimeout"
	})
	t.Logf("Evicted: %s", workloadCondition(wl, queueing.ConditionEvicted))
	waitJob(t, job, "suspended and resumed by Kueue", func(j *kubeflowv1.TFJob) bool {
		c := jobCondition(j, kubeflowv1.JobSuspended)
		return c != nil && c.Status == corev1.ConditionFalse && !suspended(j)
	})
	framework.Eventually(t, "new pods of "+job.Name+" after the requeue", func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, job)
		for i := range pods {
			if pods[i].Name == firstPod.Name && pods[i].UID != firstPod.UID {
				return true, nil
			}
		}
		return false, err
	})
}

func jobCondition(j *kubeflowv1.TFJob, t kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}
