package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func TestCheckCRD(t *testing.T) {
	if got := checkCRD(true); got.Status != StatusOK {
		t.Errorf("served: %+v, want OK", got)
	}
	got := checkCRD(false)
	if got.Status != StatusFail || !strings.Contains(got.Fix, "deploy/crds/kubeflow.org_tfjobs.yaml") {
		t.Errorf("not served: %+v, want FAIL with the apply command", got)
	}
}

func TestCheckOperator(t *testing.T) {
	cases := map[string]struct {
		leases      []coordinationv1.Lease
		jobs        []kubeflowv1.TFJob
		pods        []corev1.Pod
		wantStatus  Status
		wantFinding string
	}{
		"a fresh leader lease": {
			leases:     []coordinationv1.Lease{lease(3*time.Second, 15)},
			wantStatus: StatusOK, wantFinding: "renewed Lease backfill-system/backfill-manager 3s ago",
		},
		"an expired lease": {
			leases:     []coordinationv1.Lease{lease(5*time.Minute, 15)},
			wantStatus: StatusFail, wantFinding: "expired: last renewed 5m ago",
		},
		"a job without status for minutes, even with a fresh lease": {
			leases:     []coordinationv1.Lease{lease(time.Second, 15)},
			jobs:       []kubeflowv1.TFJob{makeJob("mnist").workers(1).noStatus(5 * time.Minute).obj()},
			wantStatus: StatusFail, wantFinding: "1 TFJob(s) have had no status for over 30s (team-a/mnist; the oldest created 5m ago)",
		},
		"a job created a moment ago has no status yet": {
			jobs:       []kubeflowv1.TFJob{makeJob("mnist").workers(1).noStatus(5 * time.Second).obj()},
			wantStatus: StatusOK, wantFinding: "every one of 1 active TFJob(s) has a status",
		},
		"jobs with status and no lease": {
			jobs:       []kubeflowv1.TFJob{makeJob("mnist").workers(1).obj()},
			wantStatus: StatusOK, wantFinding: "runs without --leader-elect",
		},
		"a ready manager pod": {
			pods:       []corev1.Pod{onlinePod("backfill-6d8", 0).labels(ManagerPodLabel, ManagerPodLabelValue).ready().obj()},
			wantStatus: StatusOK, wantFinding: "manager pod web/backfill-6d8 is ready",
		},
		"a manager pod that is not ready": {
			pods:       []corev1.Pod{onlinePod("backfill-6d8", 0).labels(ManagerPodLabel, ManagerPodLabelValue).obj()},
			wantStatus: StatusFail, wantFinding: "none of the 1 manager pod(s) is ready",
		},
		// The agent's pods carry the manager's name label too.
		"a ready node agent pod is no manager": {
			pods:       []corev1.Pod{nodeAgentPod("gpu-0").ready().obj()},
			wantStatus: StatusWarn, wantFinding: "cannot tell whether the operator runs: no Lease backfill-manager in any namespace, no manager pod",
		},
		"nothing to judge by": {
			wantStatus: StatusWarn, wantFinding: "cannot tell whether the operator runs",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Leases, s.Jobs, s.Pods = tc.leases, tc.jobs, tc.pods
			got := checkOperator(s, s.activeJobs())
			if got.Status != tc.wantStatus || !strings.Contains(got.Finding, tc.wantFinding) {
				t.Errorf("got %s %q, want %s containing %q", got.Status, got.Finding, tc.wantStatus, tc.wantFinding)
			}
		})
	}
}

func TestActiveJobsLeaveOutFinishedSuspendedAndForeign(t *testing.T) {
	s := snapshot()
	suspended := makeJob("suspended").workers(1).obj()
	suspended.Spec.RunPolicy.Suspend = new(true)
	foreign := makeJob("foreign").workers(1).obj()
	foreign.Spec.RunPolicy.ManagedBy = new(kubeflowv1.ManagedByMultiKueue)
	s.Jobs = []kubeflowv1.TFJob{
		makeJob("running").workers(1).obj(),
		makeJob("done").workers(1).condition(kubeflowv1.JobSucceeded, corev1.ConditionTrue, "TFJobSucceeded").obj(),
		suspended, foreign,
	}
	var got []string
	for _, j := range s.activeJobs() {
		got = append(got, j.Name)
	}
	if diff := cmp.Diff([]string{"running"}, got); diff != "" {
		t.Errorf("active jobs (-want +got):\n%s", diff)
	}
}
