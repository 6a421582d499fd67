package tfjob

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// TestPlanPassRetiresKeptSucceededPods: a succeeded pod leaves the cache
// with its release unless cleanPodPolicy All will delete it; no other pod
// is ever retired.
func TestPlanPassRetiresKeptSucceededPods(t *testing.T) {
	running := func(clean kubeflowv1.CleanPodPolicy) *kubeflowv1.TFJob {
		return makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 2, Never).cleanPodPolicy(clean).obj()
	}
	finished := func(clean kubeflowv1.CleanPodPolicy) *kubeflowv1.TFJob {
		return makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 2, Never).cleanPodPolicy(clean).
			finished(kubeflowv1.JobSucceeded, "TFJobSucceeded", ago(0)).obj()
	}
	cases := map[string]struct {
		job         *kubeflowv1.TFJob
		pods        []*corev1.Pod
		wantRelease []string
		wantRetire  []string
	}{
		"a worker succeeded while the job runs": {
			job:         running(kubeflowv1.CleanPodPolicyRunning),
			pods:        podList(runningPod(Chief, 0), succeededPod(Worker, 0), runningPod(Worker, 1)),
			wantRelease: []string{"j-worker-0"}, wantRetire: []string{"j-worker-0"},
		},
		"cleanPodPolicy All deletes it when the job finishes": {
			job:         running(kubeflowv1.CleanPodPolicyAll),
			pods:        podList(runningPod(Chief, 0), succeededPod(Worker, 0), runningPod(Worker, 1)),
			wantRelease: []string{"j-worker-0"},
		},
		"the job finished: only succeeded pods are retired": {
			job:         finished(kubeflowv1.CleanPodPolicyNone),
			pods:        podList(succeededPod(Chief, 0), failedPod(Worker, 0, 1), runningPod(Worker, 1)),
			wantRelease: []string{"j-chief-0", "j-worker-0", "j-worker-1"}, wantRetire: []string{"j-chief-0"},
		},
		"the job finished under All": {
			job:         finished(kubeflowv1.CleanPodPolicyAll),
			pods:        podList(succeededPod(Chief, 0), succeededPod(Worker, 0)),
			wantRelease: []string{"j-chief-0", "j-worker-0"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := planPass(tc.job, observe(tc.job, tc.pods...), testNow, defaultPolicy)
			var retired []string
			for _, pod := range p.releasePods {
				if p.retirePods[pod.UID] {
					retired = append(retired, pod.Name)
				}
			}
			slices.Sort(retired)
			if diff := cmp.Diff(tc.wantRelease, podNames(p.releasePods), cmpOpts...); diff != "" {
				t.Errorf("released (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRetire, retired, cmpOpts...); diff != "" {
				t.Errorf("retired (-want +got):\n%s", diff)
			}
		})
	}
}
