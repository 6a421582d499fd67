package doctor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// A healthy cluster: every check runs, in the checklist's order, none
// finds anything, and the Prometheus checks say they were skipped.
func TestRunOnAHealthyCluster(t *testing.T) {
	s := snapshot()
	job := makeJob("mnist").workers(1, "nvidia.com/gpu", "1").obj()
	s.Jobs = []kubeflowv1.TFJob{job}
	s.Nodes = []corev1.Node{explained(node("gpu-0", "cpu", "16", "nvidia.com/gpu", "8", "backfill.dev/batch-cpu", "4000"),
		reclaim.Explanation{State: reclaim.StateFresh, At: now, Why: "grew to the target"})}
	s.Pods = []corev1.Pod{jobPod(job, "mnist-worker-0").on("gpu-0").obj(), onlinePod("web-0", 0).on("gpu-0").obj()}
	s.PriorityClasses = []schedulingv1.PriorityClass{priorityClass("backfill-offline", -100, corev1.PreemptNever)}

	got := Run(s, nil)
	want := []verdict{
		{CheckCRD, StatusOK, ""}, {CheckCRDMatch, StatusOK, ""}, {CheckOperator, StatusOK, ""}, {CheckOtherController, StatusOK, ""},
		{CheckKueueIntegration, StatusOK, ""}, {CheckKueueWaiting, StatusOK, ""}, {CheckPriorityClassMissing, StatusOK, ""},
		{CheckPendingResources, StatusOK, ""}, {CheckResourceQuota, StatusOK, ""}, {CheckLimitRange, StatusOK, ""},
		{CheckPodCreate, StatusOK, ""}, {CheckOfflinePriority, StatusOK, ""}, {CheckGPUNodes, StatusOK, ""}, {CheckReclaimUsage, StatusOK, ""},
		{CheckNodeAgent, StatusOK, ""}, {CheckOnlineSignal, StatusOK, ""}, {CheckCrashLoop, StatusOK, ""}, {CheckGPUMetricNames, StatusOK, ""},
		{"prometheus", StatusSkip, ""}, {CheckGPULoanForecast, StatusOK, ""}, {CheckGPULoanKEDA, StatusOK, ""},
	}
	if diff := cmp.Diff(want, verdicts(got)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if Failed(got) {
		t.Error("Failed reports a FAIL on a healthy cluster")
	}
}

// Without the CRD there are no jobs to judge; the CRD check alone FAILs,
// and there is no CRD to compare with backfill's. Without nodes,
// reclaim-usage has nothing to judge and is skipped.
func TestRunWithoutTheCRD(t *testing.T) {
	s := snapshot()
	s.TFJobsServed, s.CRD = false, nil
	s.PriorityClasses = []schedulingv1.PriorityClass{priorityClass("backfill-offline", -100, corev1.PreemptNever)}
	got := Run(s, nil)
	if diff := cmp.Diff(map[Status]int{StatusFail: 1, StatusWarn: 1, StatusOK: 16, StatusSkip: 3}, Count(got)); diff != "" {
		t.Errorf("counts (-want +got):\n%s\n%+v", diff, got)
	}
	if !Failed(got) || got[0].Check != CheckCRD || got[0].Status != StatusFail {
		t.Errorf("want the CRD check first, FAIL: %+v", got[0])
	}
}

// A user who may read one namespace only: the checks that need
// cluster-wide lists are skipped with the reads refused, the others run.
func TestRunWithNamespaceAccessOnly(t *testing.T) {
	s := snapshot()
	job := makeJob("mnist").workers(1, "nvidia.com/gpu", "1").obj()
	s.Jobs = []kubeflowv1.TFJob{job}
	s.Pods = []corev1.Pod{jobPod(job, "mnist-worker-0").obj()}
	s.Forbidden = map[string]bool{readAllPods: true, readNodes: true, readPriorityClasses: true, readLeases: true,
		readCRDs: true, readDeployments: true, readStatefulSets: true, readWorkloads: true, readPrometheusRules: true, readDashboards: true}

	got := Run(s, nil)
	want := []verdict{
		{CheckCRD, StatusOK, ""}, {CheckCRDMatch, StatusSkip, ""}, {CheckOperator, StatusSkip, ""}, {CheckOtherController, StatusSkip, ""},
		{CheckKueueIntegration, StatusSkip, ""}, {CheckKueueWaiting, StatusSkip, ""}, {CheckPriorityClassMissing, StatusSkip, ""},
		{CheckPendingResources, StatusSkip, ""}, {CheckResourceQuota, StatusOK, ""}, {CheckLimitRange, StatusOK, ""},
		{CheckPodCreate, StatusOK, ""}, {CheckOfflinePriority, StatusSkip, ""}, {CheckGPUNodes, StatusSkip, ""}, {CheckReclaimUsage, StatusSkip, ""},
		{CheckNodeAgent, StatusSkip, ""}, {CheckOnlineSignal, StatusSkip, ""}, {CheckCrashLoop, StatusOK, ""}, {CheckGPUMetricNames, StatusSkip, ""},
		{"prometheus", StatusSkip, ""}, {CheckGPULoanForecast, StatusSkip, ""}, {CheckGPULoanKEDA, StatusOK, ""},
	}
	if diff := cmp.Diff(want, verdicts(got)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	for _, r := range got {
		if r.Check == CheckOfflinePriority && r.Finding != "not checked: you may not list pods in every namespace or priorityclasses, which this check needs" {
			t.Errorf("offline-priority SKIP says %q, want the refused reads", r.Finding)
		}
		if r.Check == CheckReclaimUsage && r.Finding != "not checked: you may not list nodes, which this check needs" {
			t.Errorf("reclaim-usage SKIP says %q, want the refused read", r.Finding)
		}
		if r.Check == CheckNodeAgent && r.Finding != "not checked: you may not list pods in every namespace, which this check needs" {
			t.Errorf("node-agent SKIP says %q, want the refused read", r.Finding)
		}
		if r.Check == CheckOnlineSignal && r.Finding != "not checked: you may not list nodes, which this check needs" {
			t.Errorf("online-signal SKIP says %q, want the refused read", r.Finding)
		}
		if r.Check == CheckGPUMetricNames && r.Finding != "cannot read prometheusrules.monitoring.coreos.com in every namespace or configmaps in every namespace, so the GPU metric names they query were not checked" {
			t.Errorf("gpu-metric-names SKIP says %q, want the refused reads", r.Finding)
		}
		if r.Check == CheckGPULoanForecast && r.Finding != "not checked: you may not list deployments in every namespace or statefulsets in every namespace or nodes, which this check needs" {
			t.Errorf("gpu-loan-forecast SKIP says %q, want the refused reads", r.Finding)
		}
		if r.Check == CheckOtherController && r.Finding != "not checked: you may not list deployments in every namespace or pods in every namespace or leases in every namespace, which this check needs" {
			t.Errorf("other-tfjob-controller SKIP says %q, want the refused reads", r.Finding)
		}
	}
}

// Each check of the checklist has an id of its own, and a user refused
// one read a check needs gets that check as a SKIP naming the read.
func TestChecklist(t *testing.T) {
	ids := map[string]bool{}
	for _, c := range checklist {
		if ids[c.id] {
			t.Errorf("check %s is twice in the checklist", c.id)
		}
		ids[c.id] = true
		for _, read := range c.needs {
			s := snapshot()
			s.Forbidden = map[string]bool{read: true}
			var got []Result
			for _, r := range Run(s, nil) {
				if r.Check == c.id {
					got = append(got, r)
				}
			}
			want := "not checked: you may not list " + read + ", which this check needs"
			if len(got) != 1 || got[0].Status != StatusSkip || got[0].Finding != want {
				t.Errorf("%s with %s refused: %+v, want one SKIP saying %q", c.id, read, got, want)
			}
		}
	}
}
