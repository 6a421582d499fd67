//go:build integration

package kueue

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// podSetLabel is the label Kueue gives each admitted replica template.
const podSetLabel = "kueue.x-k8s.io/podset"

// Kueue's webhook suspends a labelled job as it is created; admitted, the
// job runs on the flavor's nodes, with the flavor's node selector and
// toleration and Kueue's labels on every pod: pods made before admission
// would carry none of them. Running marks the Workload's pods ready, and
// Succeeded finishes it.
func TestAdmittedJobRunsOnItsFlavor(t *testing.T) {
	q := newQueue(t, 4)
	job := newJob(q, "admitted", 2, "8s").create(t)
	if !suspended(job) {
		t.Fatalf("Kueue's webhook did not suspend %s at creation: runPolicy.suspend = %v", job.Name, job.Spec.RunPolicy.Suspend)
	}
	wl := waitWorkload(t, job, "admitted", (*queueing.Workload).Admitted)
	if wl.ClusterQueue != q.clusterQueue {
		t.Errorf("Workload admitted by ClusterQueue %q, want %q", wl.ClusterQueue, q.clusterQueue)
	}
	for _, pod := range waitRunning(t, job, 2) {
		if got := pod.Spec.NodeSelector[poolLabel]; got != poolValue {
			t.Errorf("Pod %s nodeSelector %v, want %s=%s from the flavor", pod.Name, pod.Spec.NodeSelector, poolLabel, poolValue)
		}
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.Key == poolTaint }) {
			t.Errorf("Pod %s tolerations %v lack the flavor's %s", pod.Name, pod.Spec.Tolerations, poolTaint)
		}
		if got := pod.Labels[podSetLabel]; got != "worker" {
			t.Errorf("Pod %s label %s = %q, want worker", pod.Name, podSetLabel, got)
		}
		if !strings.HasPrefix(pod.Spec.NodeName, "sim-pool-") {
			t.Errorf("Pod %s runs on %q, want a training node", pod.Name, pod.Spec.NodeName)
		}
	}
	waitWorkload(t, job, "with its pods ready", func(w *queueing.Workload) bool {
		return meta(w, queueing.ConditionPodsReady, metav1.ConditionTrue)
	})
	waitJob(t, job, "succeeded", func(j *kubeflowv1.TFJob) bool { return conditionTrue(j, kubeflowv1.JobSucceeded) })
	waitWorkload(t, job, "finished", func(w *queueing.Workload) bool {
		return meta(w, queueing.ConditionFinished, metav1.ConditionTrue)
	})
}

// A job beyond its ClusterQueue's quota stays suspended, with no pod, and
// Kueue says why; it starts once the job holding the quota finishes.
func TestQueuedUntilQuotaFrees(t *testing.T) {
	q := newQueue(t, 2)
	first := newJob(q, "first", 2, "8s").create(t)
	waitRunning(t, first, 2)
	second := newJob(q, "second", 2, "4s").create(t)
	wl := waitWorkload(t, second, "pending for quota", func(w *queueing.Workload) bool {
		c := w.Condition(queueing.ConditionQuotaReserved)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "insufficient unused quota")
	})
	t.Logf("Queued: %s", workloadCondition(wl, queueing.ConditionQuotaReserved))
	noPods(t, second, "while the quota is used")
	if got, _ := getJob(context.Background(), second); !suspended(got) {
		t.Fatalf("The queued job %s is not suspended", second.Name)
	}

	done := waitJob(t, first, "succeeded", func(j *kubeflowv1.TFJob) bool { return conditionTrue(j, kubeflowv1.JobSucceeded) })
	pods := waitRunning(t, second, 2)
	for _, pod := range pods {
		if pod.CreationTimestamp.Before(done.Status.CompletionTime) {
			t.Errorf("Pod %s created at %s, before %s finished at %s", pod.Name, pod.CreationTimestamp, first.Name, done.Status.CompletionTime)
		}
	}
	waitJob(t, second, "succeeded", func(j *kubeflowv1.TFJob) bool { return conditionTrue(j, kubeflowv1.JobSucceeded) })
}

// A failed job finishes its Workload too, and its quota goes to the next.
func TestFailedJobFreesItsQuota(t *testing.T) {
	q := newQueue(t, 2)
	failing := newJob(q, "failing", 2, "3s").exitCode("1").create(t)
	waitRunning(t, failing, 2)
	next := newJob(q, "next", 2, "3s").create(t)
	waitJob(t, failing, "failed", func(j *kubeflowv1.TFJob) bool { return conditionTrue(j, kubeflowv1.JobFailed) })
	wl := waitWorkload(t, failing, "finished", func(w *queueing.Workload) bool {
		return meta(w, queueing.ConditionFinished, metav1.ConditionTrue)
	})
	t.Logf("Failed job's Workload: %s", workloadCondition(wl, queueing.ConditionFinished))
	waitRunning(t, next, 2)
}

func meta(w *queueing.Workload, t string, status metav1.ConditionStatus) bool {
	c := w.Condition(t)
	return c != nil && c.Status == status
}
