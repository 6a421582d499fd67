package doctor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func quota(name string, hard, used corev1.ResourceList) corev1.ResourceQuota {
	return corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: used},
	}
}

func TestCheckQuota(t *testing.T) {
	job := makeJob("resnet").workers(2, "nvidia.com/gpu", "2", "cpu", "1").obj()
	oneRunning := []corev1.Pod{jobPod(job, "resnet-worker-0").on("gpu-0").obj()}
	cases := map[string]struct {
		job          kubeflowv1.TFJob
		quotas       []corev1.ResourceQuota
		events       []corev1.Event
		pods         []corev1.Pod
		want         []verdict
		wantFindings []string
	}{
		"GPU quota used up": {
			job:          job,
			quotas:       []corev1.ResourceQuota{quota("gpus", resources("requests.nvidia.com/gpu", "4", "pods", "10"), resources("requests.nvidia.com/gpu", "4", "pods", "3"))},
			pods:         oneRunning,
			want:         []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/resnet"}},
			wantFindings: []string{"1 of 2 pod(s) not created", "ResourceQuota gpus: requests.nvidia.com/gpu used 4 of 4, a pod needs 2 more"},
		},
		"pod count used up": {
			job:          job,
			quotas:       []corev1.ResourceQuota{quota("count", resources("pods", "3"), resources("pods", "3"))},
			want:         []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/resnet"}},
			wantFindings: []string{"2 of 2 pod(s) not created", "pods used 3 of 3, a pod needs 1 more"},
		},
		"room in the quota": {
			job:    job,
			quotas: []corev1.ResourceQuota{quota("gpus", resources("requests.nvidia.com/gpu", "8"), resources("requests.nvidia.com/gpu", "2"))},
			want:   []verdict{{CheckResourceQuota, StatusOK, ""}},
		},
		"every pod exists": {
			job:    job,
			quotas: []corev1.ResourceQuota{quota("gpus", resources("requests.nvidia.com/gpu", "4"), resources("requests.nvidia.com/gpu", "4"))},
			pods:   append(oneRunning, jobPod(job, "resnet-worker-1").on("gpu-1").obj()),
			want:   []verdict{{CheckResourceQuota, StatusOK, ""}},
		},
		"a refusal recorded in an event": {
			job: job,
			events: []corev1.Event{{
				ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: ns}, Type: corev1.EventTypeWarning, Reason: "FailedCreate",
				InvolvedObject: corev1.ObjectReference{Kind: "TFJob", Name: "resnet"},
				Message:        `pods "resnet-worker-0" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=8, limited: limits.cpu=8`,
			}},
			want:         []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/resnet"}},
			wantFindings: []string{"exceeded quota: compute"},
		},
		"held for a missing PriorityClass instead": {
			job:    makeJob("resnet").workers(2, "nvidia.com/gpu", "2").condition(kubeflowv1.JobCreated, corev1.ConditionFalse, reasonPriorityClassNotFound).obj(),
			quotas: []corev1.ResourceQuota{quota("count", resources("pods", "0"), resources("pods", "0"))},
			want:   []verdict{{CheckResourceQuota, StatusOK, ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Jobs, s.Quotas, s.Events, s.Pods = []kubeflowv1.TFJob{tc.job}, tc.quotas, tc.events, tc.pods
			got := checkQuota(s, s.activeJobs())
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s", diff)
			}
			for _, want := range tc.wantFindings {
				if !strings.Contains(got[0].Finding, want) {
					t.Errorf("finding %q: want %q in it", got[0].Finding, want)
				}
			}
		})
	}
}

func TestCheckLimitRange(t *testing.T) {
	limits := func(item corev1.LimitRangeItem) []corev1.LimitRange {
		item.Type = corev1.LimitTypeContainer
		return []corev1.LimitRange{{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: ns}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{item}}}}
	}
	cases := map[string]struct {
		job         kubeflowv1.TFJob
		ranges      []corev1.LimitRange
		wantStatus  Status
		wantFinding string
	}{
		"above the maximum": {
			job:        makeJob("big").workers(1, "cpu", "8").obj(),
			ranges:     limits(corev1.LimitRangeItem{Max: resources("cpu", "4")}),
			wantStatus: StatusFail, wantFinding: "LimitRange limits: worker container tensorflow has a cpu limit of 8, above the maximum 4",
		},
		"below the minimum": {
			job:        makeJob("small").workers(1, "memory", "64Mi").obj(),
			ranges:     limits(corev1.LimitRangeItem{Min: resources("memory", "1Gi")}),
			wantStatus: StatusFail, wantFinding: "requests 64Mi memory, below the minimum 1Gi",
		},
		"a request above the default limit": {
			job: func() kubeflowv1.TFJob {
				j := makeJob("nolimit").workers(1).obj()
				j.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.Containers[0].Resources.Requests = resources("cpu", "4")
				return j
			}(),
			ranges:     limits(corev1.LimitRangeItem{Default: resources("cpu", "2")}),
			wantStatus: StatusFail, wantFinding: "requests 4 cpu, more than its limit 2",
		},
		"within the range": {
			job:        makeJob("fits").workers(1, "cpu", "2").obj(),
			ranges:     limits(corev1.LimitRangeItem{Max: resources("cpu", "4"), Min: resources("cpu", "1")}),
			wantStatus: StatusOK,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Jobs, s.LimitRanges = []kubeflowv1.TFJob{tc.job}, tc.ranges
			got := checkLimitRange(s, s.activeJobs())
			if len(got) != 1 || got[0].Status != tc.wantStatus || !strings.Contains(got[0].Finding, tc.wantFinding) {
				t.Errorf("got %+v, want one %s containing %q", got, tc.wantStatus, tc.wantFinding)
			}
		})
	}
}
