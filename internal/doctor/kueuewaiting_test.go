package doctor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// waiting is a Workload that has not reserved quota since ago, as Kueue
// writes it.
func waiting(reason, message string, ago time.Duration) *queueing.Workload {
	return &queueing.Workload{Name: "tfjob-mnist-8c2d1", Conditions: []metav1.Condition{{
		Type: queueing.ConditionQuotaReserved, Status: metav1.ConditionFalse, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(now.Add(-ago)),
	}}}
}

func TestCheckKueueWaiting(t *testing.T) {
	job := queued("mnist", "training", time.Hour, true)
	cases := map[string]struct {
		jobs        []kubeflowv1.TFJob
		workload    *queueing.Workload
		want        []verdict
		wantFinding []string
		wantFix     []string
	}{
		"nothing queued": {
			jobs:        []kubeflowv1.TFJob{makeJob("mnist").workers(1).obj()},
			want:        []verdict{{CheckKueueWaiting, StatusOK, ""}},
			wantFinding: []string{"no TFJob waits in a Kueue queue"},
		},
		"a LocalQueue that does not exist": {
			jobs:     []kubeflowv1.TFJob{job},
			workload: waiting("Inadmissible", "LocalQueue training doesn't exist", 15*time.Minute),
			want:     []verdict{{CheckKueueWaiting, StatusFail, "tfjob team-a/mnist"}},
			wantFinding: []string{"suspended by Kueue for 15m (over 10 minutes), waiting in LocalQueue training: " +
				"Workload tfjob-mnist-8c2d1 says QuotaReserved=False, reason Inadmissible: LocalQueue training doesn't exist"},
			wantFix: []string{"create LocalQueue training in namespace team-a", "kubectl -n team-a label tfjob mnist kueue.x-k8s.io/queue-name=<queue> --overwrite"},
		},
		"the same with Kueue's newer reason": {
			jobs:     []kubeflowv1.TFJob{job},
			workload: waiting("Misconfigured", "LocalQueue training doesn't exist", 15*time.Minute),
			want:     []verdict{{CheckKueueWaiting, StatusFail, "tfjob team-a/mnist"}},
		},
		"a ClusterQueue that does not exist": {
			jobs:     []kubeflowv1.TFJob{job},
			workload: waiting("Inadmissible", "ClusterQueue team-a-cq doesn't exist", time.Hour),
			want:     []verdict{{CheckKueueWaiting, StatusFail, "tfjob team-a/mnist"}},
			wantFix:  []string{"create the ClusterQueue LocalQueue team-a/training points at"},
		},
		"a stopped ClusterQueue": {
			jobs:     []kubeflowv1.TFJob{job},
			workload: waiting("Inadmissible", "ClusterQueue team-a-cq is inactive", time.Hour),
			want:     []verdict{{CheckKueueWaiting, StatusFail, "tfjob team-a/mnist"}},
			wantFix:  []string{"kubectl describe clusterqueue <name> says why it is inactive"},
		},
		"waiting for quota others hold": {
			jobs:        []kubeflowv1.TFJob{job},
			workload:    waiting("Pending", "couldn't assign flavors to pod set worker: insufficient unused quota for cpu in flavor default-flavor, 3 more needed", 25*time.Minute),
			want:        []verdict{{CheckKueueWaiting, StatusWarn, "tfjob team-a/mnist"}},
			wantFinding: []string{"suspended by Kueue for 25m", "reason Pending: couldn't assign flavors to pod set worker: insufficient unused quota for cpu"},
			wantFix:     []string{"the queue's quota is held by other jobs: wait for them to finish", "raise the nominalQuota of the ClusterQueue behind LocalQueue team-a/training"},
		},
		"larger than the queue's whole quota": {
			jobs: []kubeflowv1.TFJob{job},
			workload: waiting("Pending", "couldn't assign flavors to pod set worker: insufficient quota for nvidia.com/gpu in flavor a100, previously considered podsets requests (0) + current podset request (16) > maximum capacity (8)",
				25*time.Minute),
			want:    []verdict{{CheckKueueWaiting, StatusFail, "tfjob team-a/mnist"}},
			wantFix: []string{"the job asks for more than its ClusterQueue can ever give"},
		},
		"an unknown reason": {
			jobs:     []kubeflowv1.TFJob{job},
			workload: waiting("AdmissionCheck", "the provisioning request failed", 25*time.Minute),
			want:     []verdict{{CheckKueueWaiting, StatusWarn, "tfjob team-a/mnist"}},
			wantFix:  []string{"kubectl -n team-a describe workload tfjob-mnist-8c2d1"},
		},
		"waiting for quota a short while": {
			jobs:        []kubeflowv1.TFJob{job},
			workload:    waiting("Pending", "couldn't assign flavors to pod set worker: insufficient unused quota for cpu in flavor default-flavor, 3 more needed", 2*time.Minute),
			want:        []verdict{{CheckKueueWaiting, StatusOK, ""}},
			wantFinding: []string{"1 TFJob(s) wait in Kueue queues that can admit them, none for over 10 minutes (the longest: team-a/mnist, 2m)"},
		},
		"a missing LocalQueue, at once": {
			jobs:        []kubeflowv1.TFJob{job},
			workload:    waiting("Inadmissible", "LocalQueue training doesn't exist", 20*time.Second),
			want:        []verdict{{CheckKueueWaiting, StatusFail, "tfjob team-a/mnist"}},
			wantFinding: []string{"suspended by Kueue for 20s, waiting in LocalQueue training: Workload tfjob-mnist-8c2d1 says QuotaReserved=False, reason Inadmissible: LocalQueue training doesn't exist"},
		},
		"admitted": {
			jobs: []kubeflowv1.TFJob{job},
			workload: &queueing.Workload{Name: "tfjob-mnist-8c2d1", Conditions: []metav1.Condition{
				{Type: queueing.ConditionAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: metav1.NewTime(now)},
			}},
			want: []verdict{{CheckKueueWaiting, StatusOK, ""}},
		},
		"no Workload: kueue-integration's to tell": {
			jobs: []kubeflowv1.TFJob{job},
			want: []verdict{{CheckKueueWaiting, StatusOK, ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Jobs = tc.jobs
			workloads := map[types.UID]*queueing.Workload{}
			if tc.workload != nil {
				workloads["uid-mnist"] = tc.workload
			}
			withKueue(s, []string{queueing.TFJobFramework}, workloads)
			got := checkKueueWaiting(s)
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s\n%+v", diff, got)
			}
			wantTexts(t, got[0], tc.wantFinding, tc.wantFix)
		})
	}
}
