package cli

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// A job that leaves cleanPodPolicy unset gets the manager's default,
// Running, not None.
func TestRunPolicyShowsTheEffectiveCleanPodPolicy(t *testing.T) {
	policy := func(p kubeflowv1.CleanPodPolicy) *kubeflowv1.RunPolicy {
		return &kubeflowv1.RunPolicy{CleanPodPolicy: &p}
	}
	for name, tc := range map[string]struct {
		rp   *kubeflowv1.RunPolicy
		want string
	}{
		"unset":   {rp: &kubeflowv1.RunPolicy{}, want: "cleanPodPolicy=Running (the manager's default, --default-clean-pod-policy), backoffLimit=unlimited"},
		"None":    {rp: policy(kubeflowv1.CleanPodPolicyNone), want: "cleanPodPolicy=None, backoffLimit=unlimited"},
		"All":     {rp: policy(kubeflowv1.CleanPodPolicyAll), want: "cleanPodPolicy=All, backoffLimit=unlimited"},
		"Running": {rp: policy(kubeflowv1.CleanPodPolicyRunning), want: "cleanPodPolicy=Running, backoffLimit=unlimited"},
		"with the rest": {rp: &kubeflowv1.RunPolicy{BackoffLimit: ptr.To[int32](3), ActiveDeadlineSeconds: ptr.To[int64](600), Suspend: ptr.To(true)},
			want: "cleanPodPolicy=Running (the manager's default, --default-clean-pod-policy), backoffLimit=3, activeDeadlineSeconds=600, suspended"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := runPolicyInWords(tc.rp); got != tc.want {
				t.Errorf("runPolicyInWords:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// A job the operator holds back shows why, not Pending: it has been seen.
func TestStateOfAHeldJob(t *testing.T) {
	held := makeJob("ns", "held", time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
		condition(kubeflowv1.JobCreated, corev1.ConditionFalse, "InvalidCapacity", "…", time.Minute).obj()
	unseen := makeJob("ns", "unseen", time.Second).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).obj()
	resumed := makeJob("ns", "resumed", time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
		condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "", time.Hour).
		condition(kubeflowv1.JobRunning, corev1.ConditionFalse, "TFJobRunning", "", time.Minute).
		condition(kubeflowv1.JobSuspended, corev1.ConditionFalse, "TFJobResumed", "", time.Second).obj()
	for job, want := range map[*kubeflowv1.TFJob]string{held: "InvalidCapacity", unseen: "Pending", resumed: "Created"} {
		if got := stateOf(job); got != want {
			t.Errorf("%s: stateOf = %q, want %q", job.Name, got, want)
		}
	}
	if got := jobStateInWords(held); !strings.HasPrefix(got, "InvalidCapacity (held: ") {
		t.Errorf("describe's state of a held job = %q, want InvalidCapacity (held: …)", got)
	}
	if got := jobStateInWords(unseen); got != "Pending" {
		t.Errorf("describe's state of an unseen job = %q, want Pending", got)
	}
}

// The chief decides whenever it runs a replica, AllWorkers or not, as the
// manager's decidingType does; a chief of 0 replicas does not.
func TestSuccessPolicyAsTheManagerApplies(t *testing.T) {
	allWorkers := func(b *jobBuilder) *kubeflowv1.TFJob {
		b.job.Spec.SuccessPolicy = ptr.To(kubeflowv1.SuccessPolicyAllWorkers)
		return b.obj()
	}
	workers := func() *jobBuilder {
		return makeJob("ns", "j", time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 3, 0)
	}
	for name, tc := range map[string]struct {
		job  *kubeflowv1.TFJob
		want string
	}{
		"workers":                {job: workers().obj(), want: "default (succeeds when worker 0 has)"},
		"workers, AllWorkers":    {job: allWorkers(workers()), want: "AllWorkers (succeeds when every worker has)"},
		"chief":                  {job: workers().replicas(kubeflowv1.ReplicaTypeChief, 1, 0).obj(), want: "default (succeeds when the chief has)"},
		"chief, AllWorkers":      {job: allWorkers(workers().replicas(kubeflowv1.ReplicaTypeChief, 1, 0)), want: "AllWorkers, ignored beside a chief: succeeds when the chief has"},
		"master":                 {job: workers().replicas(kubeflowv1.ReplicaTypeMaster, 1, 0).obj(), want: "default (succeeds when the master has)"},
		"chief of 0, AllWorkers": {job: allWorkers(workers().replicas(kubeflowv1.ReplicaTypeChief, 0, 0)), want: "AllWorkers (succeeds when every worker has)"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := successPolicyInWords(tc.job); got != tc.want {
				t.Errorf("successPolicyInWords:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// The pods' PriorityClass is the truth: the manager may run with another
// --offline-priority-class than backfill-offline.
func TestPriorityClassFromThePods(t *testing.T) {
	job := makeJob("ns", "j", time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 2, 0).obj()
	if got, want := priorityClassInWords(job, nil), "backfill-offline (the manager's default, --offline-priority-class)"; got != want {
		t.Errorf("without pods: %q, want %q", got, want)
	}
	if got := priorityClassShown(job, nil); got != colocation.DefaultOfflinePriorityClass {
		t.Errorf("get without pods: %q, want %s", got, colocation.DefaultOfflinePriorityClass)
	}
	pods := []corev1.Pod{*podOf(job, kubeflowv1.ReplicaTypeWorker, 0), *podOf(job, kubeflowv1.ReplicaTypeWorker, 1)}
	for i := range pods {
		pods[i].Spec.PriorityClassName = "training-low"
	}
	if got := priorityClassInWords(job, pods); got != "training-low" {
		t.Errorf("describe with pods: %q, want training-low", got)
	}
	if got := jobRow(job, pods, true, fixedNow)[10]; got != "training-low" {
		t.Errorf("get -o wide PRIORITY-CLASS: %q, want training-low", got)
	}
	named := makeJob("ns", "k", time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).priorityClass("batch-low").obj()
	if got := priorityClassInWords(named, nil); got != "batch-low" {
		t.Errorf("a job that names its class: %q, want batch-low", got)
	}
}

// An invalid capacity annotation holds the job; describe says so instead
// of "reclaimed".
func TestCapacityOfAnInvalidAnnotation(t *testing.T) {
	job := makeJob("ns", "j", time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).obj()
	job.Annotations = map[string]string{colocation.CapacityAnnotation: "spare"}
	if got := capacityInWords(job, nil); !strings.HasPrefix(got, "invalid: annotation backfill.dev/capacity=\"spare\"") || !strings.HasSuffix(got, "the operator holds the job until it is fixed") {
		t.Errorf("capacityInWords = %q", got)
	}
}

func TestRestartPolicyDefaultsToNever(t *testing.T) {
	if got := restartPolicyOf(&kubeflowv1.ReplicaSpec{}); got != "Never" {
		t.Errorf("restartPolicyOf(unset) = %q, want Never", got)
	}
}
