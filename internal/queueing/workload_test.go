package queueing

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

var now = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func condition(ctype string, status metav1.ConditionStatus, reason, message string, at time.Duration) metav1.Condition {
	return metav1.Condition{Type: ctype, Status: status, Reason: reason, Message: message, LastTransitionTime: ago(at)}
}

// Conditions as Kueue writes them.
var (
	noQuota = condition(ConditionQuotaReserved, metav1.ConditionFalse, "Pending",
		"couldn't assign flavors to pod set worker: insufficient quota for cpu in flavor default-flavor, request > maximum capacity (24 > 8)", 5*time.Minute)
	quotaReserved = condition(ConditionQuotaReserved, metav1.ConditionTrue, "QuotaReserved", "Quota reserved in ClusterQueue cluster-queue", 2*time.Hour)
	admitted      = condition(ConditionAdmitted, metav1.ConditionTrue, "Admitted", "The workload is admitted", 2*time.Hour)
	notAdmitted   = condition(ConditionAdmitted, metav1.ConditionFalse, "NoReservation", "The workload has no reservation", 5*time.Minute)
	podsReady     = condition(ConditionPodsReady, metav1.ConditionTrue, "PodsReady", "All pods reached readiness and the workload is running", time.Hour)
	evicted       = condition(ConditionEvicted, metav1.ConditionTrue, "Preempted", "Preempted to accommodate a workload (UID: 1, JobUID: 2) due to prioritization in the ClusterQueue", 3*time.Minute)
	requeued      = condition("Requeued", metav1.ConditionTrue, "Preempted", "Preempted to accommodate a workload", time.Minute)
	// waitingChecks: quota reserved, admission checks still pending.
	waitingChecks = condition(ConditionAdmitted, metav1.ConditionFalse, "UnsatisfiedChecks", "The workload has not all admission checks", time.Minute)
)

// workloadObject is a Workload as the apiserver returns it, owned by the
// TFJob of uid (none when uid is empty).
func workloadObject(name, uid string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{"namespace": "research", "name": name},
		"spec":     map[string]any{"queueName": "training"},
	}}
	if uid != "" {
		u.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind, Name: "job-" + uid, UID: types.UID(uid), Controller: ptr.To(true),
		}})
	}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestWorkloadOf(t *testing.T) {
	for name, tc := range map[string]struct {
		status  map[string]any
		want    *Workload
		wantErr bool
	}{
		"admitted": {
			status: map[string]any{
				"admission": map[string]any{"clusterQueue": "cluster-queue", "podSetAssignments": []any{map[string]any{"name": "worker"}}},
				"conditions": []any{
					map[string]any{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue cluster-queue", "lastTransitionTime": "2026-03-14T10:00:00Z"},
					map[string]any{"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted", "lastTransitionTime": "2026-03-14T10:00:00Z"},
				},
			},
			want: &Workload{Name: "tfjob-mnist-1", ClusterQueue: "cluster-queue", Conditions: []metav1.Condition{quotaReserved, admitted}},
		},
		"waiting": {
			status: map[string]any{"conditions": []any{
				map[string]any{"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": noQuota.Message, "lastTransitionTime": "2026-03-14T11:55:00Z"},
			}},
			want: &Workload{Name: "tfjob-mnist-1", Conditions: []metav1.Condition{noQuota}},
		},
		"no status yet": {want: &Workload{Name: "tfjob-mnist-1"}},
		"conditions that are not a list": {
			status:  map[string]any{"conditions": "QuotaReserved"},
			wantErr: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := workloadOf(workloadObject("tfjob-mnist-1", "uid-mnist", tc.status))
			if (err != nil) != tc.wantErr {
				t.Fatalf("workloadOf: error %v, want an error: %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("workloadOf (-want +got):\n%s", diff)
			}
		})
	}
}

// Why says why a waiting job waits even when newer news came after, and
// otherwise what happened last.
func TestWhy(t *testing.T) {
	for name, tc := range map[string]struct {
		conditions []metav1.Condition
		want       *metav1.Condition
	}{
		"no conditions yet":              {},
		"waiting for quota":              {conditions: []metav1.Condition{noQuota, notAdmitted}, want: &noQuota},
		"requeued after a preemption":    {conditions: []metav1.Condition{evicted, noQuota, notAdmitted, requeued}, want: &noQuota},
		"admitted, then its pods ready":  {conditions: []metav1.Condition{quotaReserved, admitted, podsReady}, want: &podsReady},
		"quota reserved, checks pending": {conditions: []metav1.Condition{quotaReserved, waitingChecks}, want: &waitingChecks},
		// Kueue marks PodsReady=False as it makes the Workload, before
		// it has tried to admit it: no reason to wait.
		"not considered yet, pods not ready": {conditions: []metav1.Condition{{Type: ConditionPodsReady, Status: metav1.ConditionFalse, Reason: "WaitForStart", LastTransitionTime: ago(time.Second)}}},
	} {
		t.Run(name, func(t *testing.T) {
			w := &Workload{Conditions: tc.conditions}
			if diff := cmp.Diff(tc.want, w.Why()); diff != "" {
				t.Errorf("Why (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitingSince(t *testing.T) {
	job := &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: ago(time.Hour)}}
	for name, tc := range map[string]struct {
		conditions []metav1.Condition
		want       time.Time
	}{
		"quota refused": {conditions: []metav1.Condition{noQuota}, want: noQuota.LastTransitionTime.Time},
		"not considered yet, since the job's creation": {want: job.CreationTimestamp.Time},
		"admitted, since the job's creation":           {conditions: []metav1.Condition{quotaReserved, admitted}, want: job.CreationTimestamp.Time},
	} {
		t.Run(name, func(t *testing.T) {
			w := &Workload{Conditions: tc.conditions}
			if got := w.WaitingSince(job); !got.Equal(tc.want) {
				t.Errorf("WaitingSince = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestQueued(t *testing.T) {
	// queue "-" is a job without the label.
	job := func(queue string, suspend *bool) *kubeflowv1.TFJob {
		j := &kubeflowv1.TFJob{}
		if queue != "-" {
			j.Labels = map[string]string{QueueNameLabel: queue}
		}
		j.Spec.RunPolicy.Suspend = suspend
		return j
	}
	for name, tc := range map[string]struct {
		job  *kubeflowv1.TFJob
		want bool
	}{
		"labelled and suspended":      {job: job("training", ptr.To(true)), want: true},
		"labelled and admitted":       {job: job("training", ptr.To(false))},
		"labelled, suspend unset":     {job: job("training", nil)},
		"suspended without the label": {job: job("-", ptr.To(true))},
		"empty queue name, suspended": {job: job("", ptr.To(true))},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Queued(tc.job); got != tc.want {
				t.Errorf("Queued = %t, want %t", got, tc.want)
			}
		})
	}
}

// kueueMapper knows Kueue's Workloads, as discovery does where Kueue is
// installed.
func kueueMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(WorkloadListGVK.GroupVersion().WithKind("Workload"), meta.RESTScopeNamespace)
	return m
}

func TestFindWorkload(t *testing.T) {
	mine := workloadObject("tfjob-mnist-1", "uid-mnist", map[string]any{"admission": map[string]any{"clusterQueue": "cluster-queue"}})
	other := workloadObject("tfjob-resnet-2", "uid-resnet", nil)
	// A Workload of a batch Job with the same UID as no TFJob could have:
	// only a TFJob owner counts.
	batch := workloadObject("job-mnist-3", "", nil)
	batch.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "mnist", UID: "uid-batch"}})
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithRESTMapper(kueueMapper()).WithObjects(mine, other, batch).Build()
	job := func(uid string) *kubeflowv1.TFJob {
		return &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: "research", Name: "j", UID: types.UID(uid)}}
	}
	ctx := context.Background()

	got, err := FindWorkload(ctx, c, job("uid-mnist"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Workload{Name: "tfjob-mnist-1", ClusterQueue: "cluster-queue"}, got); diff != "" {
		t.Errorf("FindWorkload of mnist (-want +got):\n%s", diff)
	}
	for _, uid := range []string{"uid-none", "uid-batch"} {
		if got, err := FindWorkload(ctx, c, job(uid)); err != nil || got != nil {
			t.Errorf("FindWorkload of %s = %+v, %v; want nil, nil", uid, got, err)
		}
	}
	if got, err := FindWorkload(ctx, c, &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", UID: "uid-mnist"}}); err != nil || got != nil {
		t.Errorf("FindWorkload in another namespace = %+v, %v; want nil, nil", got, err)
	}

	// Where Kueue is not installed, the client's RESTMapper finds no
	// Workload kind (the fake client does not consult its mapper on List).
	noKueue := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return &meta.NoKindMatchError{GroupKind: WorkloadListGVK.GroupKind(), SearchedVersions: []string{WorkloadListGVK.Version}}
		},
	})
	if _, err := FindWorkload(ctx, noKueue, job("uid-mnist")); !errors.Is(err, ErrNoKueue) {
		t.Errorf("FindWorkload where Kueue is not installed: %v, want ErrNoKueue", err)
	}
}
