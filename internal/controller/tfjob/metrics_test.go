package tfjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// TestRecreatedPods checks that the causes and reasons a pass reports to
// the metrics are the restarts and disruptions its status counts, once.
func TestRecreatedPods(t *testing.T) {
	mixed := func() *kubeflowv1.TFJob {
		return makeJob("j").replicas(Worker, 2, ExitCode).replicas(PS, 1, OnFailure).started(ago(time.Hour)).obj()
	}
	ended := []*corev1.Pod{
		failedPod(Worker, 0, 137),
		makePod(j, Worker, 1).phase(corev1.PodFailed).exitCode(143).disruption(colocation.ReasonEvictionByEvictionAPI).obj(),
		makePod(j, PS, 0).phase(corev1.PodFailed).exitCode(1).restarts(2).obj(),
	}
	cases := map[string]struct {
		job             *kubeflowv1.TFJob
		pods            []*corev1.Pod
		passes          int
		wantRestarts    map[metrics.RestartCause]int
		wantDisruptions map[string]int
	}{
		"an exit code, a failure and an eviction in one pass": {
			job: mixed(), pods: ended, passes: 1,
			wantRestarts:    map[metrics.RestartCause]int{metrics.CauseExitCode: 1, metrics.CauseOnFailure: 1},
			wantDisruptions: map[string]int{colocation.ReasonEvictionByEvictionAPI: 1},
		},
		"the next pass, from a cache that still shows them, counts nothing": {
			job: mixed(), pods: ended, passes: 2,
		},
		"a pod deleted by someone while it ran": {
			job:             makeJob("j").replicas(Worker, 1, Never).started(ago(time.Hour)).obj(),
			pods:            []*corev1.Pod{makePod(j, Worker, 0).phase(corev1.PodRunning).deleting(testNow, 30).obj()},
			passes:          1,
			wantDisruptions: map[string]int{colocation.ReasonDeletedWhileRunning: 1},
		},
		"a pass that fails the job recreates nothing": {
			job:    makeJob("j").replicas(Worker, 1, Never).started(ago(time.Hour)).obj(),
			pods:   []*corev1.Pod{failedPod(Worker, 0, 1)},
			passes: 1,
		},
		"a pass that suspends the job counts the pods it stops, but no restart": {
			job:    makeJob("j").replicas(Worker, 2, OnFailure).started(ago(time.Hour)).suspend(true).obj(),
			pods:   []*corev1.Pod{runningPod(Worker, 0), failedPod(Worker, 1, 1)},
			passes: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := tc.job
			var restarts map[metrics.RestartCause]int
			var disruptions map[string]int
			for range tc.passes {
				p := planPass(job, observe(job, tc.pods...), testNow, defaultPolicy)
				restarts, disruptions = recreatedPods(job, observe(job, tc.pods...), &p.status)
				if got, want := sum(restarts), int(p.status.Restarts-job.Status.Restarts); got > want {
					t.Errorf("Restarts reported = %d, more than the %d the status counts", got, want)
				}
				if got, want := sum(disruptions), int(p.status.Disruptions-job.Status.Disruptions); got != want {
					t.Errorf("Disruptions reported = %d, want the %d the status counts", got, want)
				}
				job = job.DeepCopy()
				job.Status = p.status
			}
			if diff := cmp.Diff(tc.wantRestarts, restarts, cmpOpts...); diff != "" {
				t.Errorf("Restarts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDisruptions, disruptions, cmpOpts...); diff != "" {
				t.Errorf("Disruptions (-want +got):\n%s", diff)
			}
		})
	}
}

func sum[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
