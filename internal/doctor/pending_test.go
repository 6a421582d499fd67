package doctor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func TestCheckPending(t *testing.T) {
	gpuJob := makeJob("resnet").workers(2, "nvidia.com/gpu", "4", "cpu", "2").obj()
	hugeJob := makeJob("huge").workers(1, "nvidia.com/gpu", "16").obj()
	cpuJob := makeJob("cpu-hog").workers(1, "cpu", "64", "memory", "8Gi").obj()
	nodes := []corev1.Node{
		node("gpu-0", "cpu", "32", "memory", "128Gi", "nvidia.com/gpu", "8"),
		node("gpu-1", "cpu", "32", "memory", "128Gi", "nvidia.com/gpu", "8"),
		node("cpu-0", "cpu", "16", "memory", "64Gi"),
	}
	// Online work holds 6 GPUs on each GPU node: 2 free on each.
	busy := []corev1.Pod{
		onlinePod("infer-0", 0).on("gpu-0", "nvidia.com/gpu", "6").obj(),
		onlinePod("infer-1", 0).on("gpu-1", "nvidia.com/gpu", "6").obj(),
	}
	cases := map[string]struct {
		pods         []corev1.Pod
		want         []verdict
		wantFindings []string
	}{
		"GPUs held by online work: the job waits": {
			pods: append(busy,
				jobPod(gpuJob, "resnet-worker-0").unschedulable("0/3 nodes are available: 1 Insufficient cpu, 2 Insufficient nvidia.com/gpu.").obj(),
				jobPod(gpuJob, "resnet-worker-1").unschedulable("0/3 nodes are available: 1 Insufficient cpu, 2 Insufficient nvidia.com/gpu.").obj()),
			want: []verdict{{CheckPendingResources, StatusWarn, "tfjob team-a/resnet"}},
			wantFindings: []string{
				"2 pod(s) Pending",
				"needs 2 cpu per pod; the most free on any node is 32",
				"needs 4 nvidia.com/gpu per pod; the most free on any node is 2 (the largest node has 8)",
			},
		},
		"more GPUs per pod than any node has": {
			pods:         []corev1.Pod{jobPod(hugeJob, "huge-worker-0").unschedulable("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.").obj()},
			want:         []verdict{{CheckPendingResources, StatusFail, "tfjob team-a/huge"}},
			wantFindings: []string{"needs 16 nvidia.com/gpu per pod; the most free on any node is 8 (the largest node has 8)", "no node can ever fit a pod", "lower the nvidia.com/gpu request to at most 8"},
		},
		"more CPU than any node": {
			pods:         []corev1.Pod{jobPod(cpuJob, "cpu-hog-worker-0").unschedulable("0/3 nodes are available: 3 Insufficient cpu.").obj()},
			want:         []verdict{{CheckPendingResources, StatusFail, "tfjob team-a/cpu-hog"}},
			wantFindings: []string{"needs 64 cpu per pod; the most free on any node is 32"},
		},
		"a node selector nothing matches": {
			pods:         []corev1.Pod{jobPod(cpuJob, "cpu-hog-worker-0").unschedulable("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.").obj()},
			want:         []verdict{{CheckPendingResources, StatusFail, "tfjob team-a/cpu-hog"}},
			wantFindings: []string{"didn't match Pod's node affinity/selector", "a node selector, affinity or taint that no node satisfies"},
		},
		"a reason that may pass": {
			pods:         []corev1.Pod{jobPod(cpuJob, "cpu-hog-worker-0").unschedulable("0/3 nodes are available: waiting for the rest of the gang.").obj()},
			want:         []verdict{{CheckPendingResources, StatusWarn, "tfjob team-a/cpu-hog"}},
			wantFindings: []string{"waiting for the rest of the gang", "this may pass by itself", "backfill describe cpu-hog -n team-a"},
		},
		"scheduled pods": {
			pods: []corev1.Pod{jobPod(gpuJob, "resnet-worker-0").on("gpu-0").obj()},
			want: []verdict{{CheckPendingResources, StatusOK, ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Nodes, s.Pods = nodes, tc.pods
			s.Jobs = []kubeflowv1.TFJob{gpuJob, hugeJob, cpuJob}
			got := checkPending(s, s.activeJobs())
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s", diff)
			}
			for _, want := range tc.wantFindings {
				if !strings.Contains(got[0].Finding+" "+got[0].Fix, want) {
					t.Errorf("finding %q, fix %q: want %q in them", got[0].Finding, got[0].Fix, want)
				}
			}
		})
	}
}
