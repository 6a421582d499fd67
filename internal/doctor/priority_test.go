package doctor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func TestCheckPriorityClassMissing(t *testing.T) {
	offline := priorityClass("backfill-offline", -100, corev1.PreemptNever)
	cases := map[string]struct {
		job         kubeflowv1.TFJob
		classes     []schedulingv1.PriorityClass
		wantStatus  Status
		wantFinding string
	}{
		"schedulingPolicy names a missing class, held by the operator": {
			job:        makeJob("mnist").workers(1).priorityClass("training-low").condition(kubeflowv1.JobCreated, corev1.ConditionFalse, reasonPriorityClassNotFound).obj(),
			classes:    []schedulingv1.PriorityClass{offline},
			wantStatus: StatusFail, wantFinding: "PriorityClass training-low does not exist, so the job's pods cannot be created (the operator holds the job: Created=False, reason PriorityClassNotFound)",
		},
		"the default offline class is missing": {
			job:        makeJob("mnist").workers(1).obj(),
			wantStatus: StatusFail, wantFinding: "PriorityClass backfill-offline does not exist",
		},
		"the default offline class exists": {
			job:        makeJob("mnist").workers(1).obj(),
			classes:    []schedulingv1.PriorityClass{offline},
			wantStatus: StatusOK,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Jobs, s.PriorityClasses = []kubeflowv1.TFJob{tc.job}, tc.classes
			got := checkPriorityClassMissing(s, s.activeJobs())
			if len(got) != 1 || got[0].Status != tc.wantStatus || !strings.Contains(got[0].Finding, tc.wantFinding) {
				t.Errorf("got %+v, want one %s containing %q", got, tc.wantStatus, tc.wantFinding)
			}
		})
	}
}

func TestCheckOfflinePriority(t *testing.T) {
	offline := priorityClass("backfill-offline", -100, corev1.PreemptNever)
	cases := map[string]struct {
		jobs         []kubeflowv1.TFJob
		classes      []schedulingv1.PriorityClass
		pods         []corev1.Pod
		want         []verdict
		wantFindings []string
	}{
		"the default: -100, never preempts": {
			classes: []schedulingv1.PriorityClass{offline},
			pods:    []corev1.Pod{onlinePod("web-0", 0).obj()},
			want:    []verdict{{CheckOfflinePriority, StatusOK, ""}},
		},
		"the value-100 trap": {
			jobs:         []kubeflowv1.TFJob{makeJob("mnist").workers(1).priorityClass("training").obj()},
			classes:      []schedulingv1.PriorityClass{offline, priorityClass("training", 100, corev1.PreemptLowerPriority)},
			pods:         []corev1.Pod{onlinePod("web-0", 0).obj()},
			want:         []verdict{{CheckOfflinePriority, StatusFail, "priorityclass training"}, {CheckOfflinePriority, StatusWarn, "priorityclass training"}},
			wantFindings: []string{"training runs at priority 100, not below online pods (lowest online priority 0, the priority of a pod without a PriorityClass)", "may preempt lower-priority pods"},
		},
		"an online pod below the offline class": {
			classes:      []schedulingv1.PriorityClass{offline},
			pods:         []corev1.Pod{onlinePod("batch-0", -1000).obj()},
			want:         []verdict{{CheckOfflinePriority, StatusFail, "priorityclass backfill-offline"}},
			wantFindings: []string{"training runs at priority -100, not below online pods (lowest online priority -1000, pod web/batch-0)"},
		},
		"a class the job pods use, not the job": {
			jobs:    []kubeflowv1.TFJob{makeJob("mnist").workers(1).obj()},
			classes: []schedulingv1.PriorityClass{offline, priorityClass("legacy", 10, corev1.PreemptNever)},
			pods: func() []corev1.Pod {
				p := jobPod(makeJob("mnist").workers(1).obj(), "mnist-worker-0").on("n1").obj()
				p.Spec.PriorityClassName = "legacy"
				return []corev1.Pod{p}
			}(),
			want:         []verdict{{CheckOfflinePriority, StatusFail, "priorityclass legacy"}},
			wantFindings: []string{"priority 10, not below online pods (lowest online priority 0, the priority of a pod without a PriorityClass)"},
		},
		"a global default class sets the bar": {
			classes: func() []schedulingv1.PriorityClass {
				def := priorityClass("default", -500, corev1.PreemptLowerPriority)
				def.GlobalDefault = true
				return []schedulingv1.PriorityClass{offline, def}
			}(),
			want:         []verdict{{CheckOfflinePriority, StatusFail, "priorityclass backfill-offline"}},
			wantFindings: []string{"lowest online priority -500, the global default PriorityClass default"},
		},
		"the offline class does not exist": {
			want: []verdict{{CheckOfflinePriority, StatusWarn, "priorityclass backfill-offline"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Jobs, s.PriorityClasses, s.Pods = tc.jobs, tc.classes, tc.pods
			got := checkOfflinePriority(s)
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s", diff)
			}
			for i, want := range tc.wantFindings {
				if !strings.Contains(got[i].Finding, want) {
					t.Errorf("finding %d %q: want %q in it", i, got[i].Finding, want)
				}
			}
		})
	}
}

func TestCheckGPUNodes(t *testing.T) {
	job := makeJob("resnet").workers(1, "nvidia.com/gpu", "1").obj()
	waiting := []corev1.Pod{jobPod(job, "resnet-worker-0").unschedulable("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.").obj()}
	cpuOnly := []corev1.Node{node("cpu-0", "cpu", "16"), node("cpu-1", "cpu", "16")}
	pluginDown := node("gpu-0", "cpu", "16")
	pluginDown.Status.Capacity = resources("cpu", "16", "nvidia.com/gpu", "8")
	mixed := []corev1.Node{node("cpu-0", "cpu", "16"), node("gpu-1", "cpu", "16", "nvidia.com/gpu", "8"), pluginDown}
	cases := map[string]struct {
		nodes       []corev1.Node
		pods        []corev1.Pod
		wantStatus  Status
		wantFinding string
	}{
		"no GPU anywhere while a GPU pod waits": {
			nodes: cpuOnly, pods: waiting,
			wantStatus: StatusFail, wantFinding: "1 GPU pod(s) wait (e.g. team-a/resnet-worker-0) but no node has nvidia.com/gpu allocatable (0 of 2 nodes",
		},
		"some GPU nodes while a GPU pod waits": {
			nodes: mixed, pods: waiting,
			wantStatus: StatusWarn, wantFinding: "1 of 3 nodes have nvidia.com/gpu allocatable (8 in all); 1 node(s) have GPUs in capacity but none allocatable",
		},
		"no GPU pod waits": {
			nodes: cpuOnly, wantStatus: StatusOK, wantFinding: "0 of 2 nodes have nvidia.com/gpu allocatable (0 in all); no GPU pod waits",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Jobs, s.Nodes, s.Pods = []kubeflowv1.TFJob{job}, tc.nodes, tc.pods
			got := checkGPUNodes(s, s.activeJobs())
			if got.Status != tc.wantStatus || !strings.Contains(got.Finding, tc.wantFinding) {
				t.Errorf("got %s %q, want %s containing %q", got.Status, got.Finding, tc.wantStatus, tc.wantFinding)
			}
		})
	}
}
