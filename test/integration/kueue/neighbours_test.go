//go:build integration

package kueue

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/doctor"
	"github.com/backfill-dev/backfill/internal/queueing"
	"github.com/backfill-dev/backfill/test/framework"
)

// A job naming a LocalQueue that does not exist stays suspended, with no
// pod, and its Workload says why.
func TestUnknownLocalQueueStaysSuspended(t *testing.T) {
	q := newQueue(t, 2)
	job := newJob(q, "lost", 1, "5s").queueName("nowhere").create(t)
	wl := waitWorkload(t, job, "inadmissible", func(w *queueing.Workload) bool {
		c := w.Condition(queueing.ConditionQuotaReserved)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "nowhere")
	})
	t.Logf("Unknown queue: %s", workloadCondition(wl, queueing.ConditionQuotaReserved))
	noPods(t, job, "for a queue that does not exist")
	if got, _ := getJob(context.Background(), job); !suspended(got) {
		t.Errorf("Job %s for a missing queue is not suspended", job.Name)
	}

	// doctor names the missing queue at once, with the fix.
	cs, err := kubernetes.NewForConfig(apiServer.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	snapshot, err := doctor.Collect(context.Background(), apiServer.Client, cs, doctor.Scope{Namespace: q.namespace, OfflinePriorityClass: colocation.DefaultOfflinePriorityClass})
	if err != nil {
		t.Fatalf("doctor: %v", err)
	}
	results := doctor.Run(snapshot, nil)
	if !slices.ContainsFunc(results, func(r doctor.Result) bool {
		return r.Check == doctor.CheckKueueWaiting && r.Status == doctor.StatusFail &&
			strings.Contains(r.Finding, "LocalQueue nowhere doesn't exist") && strings.Contains(r.Fix, "create LocalQueue nowhere")
	}) {
		t.Errorf("doctor does not name the missing LocalQueue: %+v", results)
	}
}

// Kueue refuses a change of a running job's queue; backfill keeps
// running it as it was.
func TestQueueChangeOfRunningJobRefused(t *testing.T) {
	ctx := context.Background()
	q := newQueue(t, 2)
	job := newJob(q, "moving", 1, "20s").create(t)
	waitRunning(t, job, 1)
	running, err := getJob(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	running.Labels[queueing.QueueNameLabel] = "elsewhere"
	err = apiServer.Client.Update(ctx, running)
	if err == nil {
		t.Fatalf("Kueue accepted a new queue for the running job %s", job.Name)
	}
	t.Logf("Refused: %v", err)
	framework.Consistently(t, "the job's pod stopped or its queue changed", quiet, func(ctx context.Context) (bool, error) {
		j, err := getJob(ctx, job)
		if err != nil {
			return false, err
		}
		pods, err := jobPods(ctx, job)
		return j.Labels[queueing.QueueNameLabel] != q.localQueue || suspended(j) || len(pods) != 1, err
	})
}

// A job MultiKueue dispatches belongs to another cluster's operator:
// whatever Kueue does with it here, backfill makes no pod and writes no
// status.
func TestMultiKueueJobLeftAlone(t *testing.T) {
	q := newQueue(t, 2)
	b := newJob(q, "dispatched", 1, "5s")
	b.job.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.ManagedByMultiKueue)
	job := b.create(t)
	framework.Consistently(t, "backfill acting on a MultiKueue job", quiet, func(ctx context.Context) (bool, error) {
		j, err := getJob(ctx, job)
		if err != nil {
			return false, err
		}
		pods, err := jobPods(ctx, job)
		return len(pods) > 0 || len(j.Status.Conditions) > 0, err
	})
	if wl, err := queueing.FindWorkload(context.Background(), apiServer.Client, job); err == nil && wl != nil {
		t.Logf("Kueue's Workload for it: %s; %s", workloadCondition(wl, queueing.ConditionQuotaReserved), workloadCondition(wl, queueing.ConditionAdmitted))
	}
}
