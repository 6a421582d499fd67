package queueing

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// QueueNameLabel names the LocalQueue a job is submitted to.
const QueueNameLabel = "kueue.x-k8s.io/queue-name"

// WorkloadListGVK is Kueue's Workload list, in the version Kueue v0.19
// stores.
var WorkloadListGVK = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "WorkloadList"}

// LocalQueueGVK is the queue a job's QueueNameLabel names.
var LocalQueueGVK = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "LocalQueue"}

// Workload conditions, as Kueue names them.
const (
	ConditionQuotaReserved = "QuotaReserved"
	ConditionAdmitted      = "Admitted"
	ConditionEvicted       = "Evicted"
	ConditionFinished      = "Finished"
	ConditionPodsReady     = "PodsReady"
)

// QueueName is the LocalQueue the job is submitted to, or "".
func QueueName(job *kubeflowv1.TFJob) string { return job.Labels[QueueNameLabel] }

// Queued says the job waits in a Kueue queue: it names one and is
// suspended, so no pod of it runs until Kueue admits it.
func Queued(job *kubeflowv1.TFJob) bool {
	suspend := job.Spec.RunPolicy.Suspend
	return QueueName(job) != "" && suspend != nil && *suspend
}

// Workload is what Kueue says about one job.
type Workload struct {
	Name         string
	ClusterQueue string // the ClusterQueue that admitted it; "" until then
	Conditions   []metav1.Condition
}

// Condition returns the Workload's condition of type t, or nil.
func (w *Workload) Condition(t string) *metav1.Condition {
	return meta.FindStatusCondition(w.Conditions, t)
}

// Admitted says Kueue admitted the job and it may run.
func (w *Workload) Admitted() bool {
	return meta.IsStatusConditionTrue(w.Conditions, ConditionAdmitted)
}

// Why is the Workload's newest word on why it waits or what happened to
// it last: the condition changed most recently, with its reason and
// message. A waiting job's QuotaReserved=False says why it waits and wins
// over newer news; before admission PodsReady=False (Kueue sets it from
// the start) says nothing. nil when Kueue has said nothing yet.
func (w *Workload) Why() *metav1.Condition {
	if c := w.Condition(ConditionQuotaReserved); c != nil && c.Status == metav1.ConditionFalse && !w.Admitted() {
		return c
	}
	var newest *metav1.Condition
	for i := range w.Conditions {
		c := &w.Conditions[i]
		if c.Type == ConditionPodsReady && !w.Admitted() {
			continue
		}
		if newest == nil || c.LastTransitionTime.After(newest.LastTransitionTime.Time) {
			newest = c
		}
	}
	return newest
}

// WaitingSince is when the job last started waiting for admission: its
// QuotaReserved condition's change to False, else the job's creation.
func (w *Workload) WaitingSince(job *kubeflowv1.TFJob) time.Time {
	if c := w.Condition(ConditionQuotaReserved); c != nil && c.Status == metav1.ConditionFalse {
		return c.LastTransitionTime.Time
	}
	return job.CreationTimestamp.Time
}

// ErrNoKueue says the cluster serves no Kueue Workloads.
var ErrNoKueue = fmt.Errorf("the cluster serves no kueue.x-k8s.io/v1beta2 Workloads: Kueue is not installed")

// FindWorkload returns the Workload Kueue keeps for job (the one it owns),
// nil when there is none, or ErrNoKueue.
func FindWorkload(ctx context.Context, c client.Reader, job *kubeflowv1.TFJob) (*Workload, error) {
	all, err := ListWorkloads(ctx, c, job.Namespace)
	if err != nil {
		return nil, err
	}
	return all[job.UID], nil
}

// ListWorkloads returns the Workloads of namespace ("" for all) by the UID
// of the TFJob that owns each.
func ListWorkloads(ctx context.Context, c client.Reader, namespace string) (map[types.UID]*Workload, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(WorkloadListGVK)
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, ErrNoKueue
		}
		return nil, fmt.Errorf("listing Kueue Workloads: %w", err)
	}
	byJob := map[types.UID]*Workload{}
	for i := range list.Items {
		item := &list.Items[i]
		owner := tfJobOwner(item)
		if owner == "" {
			continue
		}
		w, err := workloadOf(item)
		if err != nil {
			return nil, err
		}
		byJob[owner] = w
	}
	return byJob, nil
}

// tfJobOwner is the UID of the TFJob that owns the Workload, or "".
func tfJobOwner(item *unstructured.Unstructured) types.UID {
	for _, ref := range item.GetOwnerReferences() {
		if ref.Kind == kubeflowv1.Kind && ref.APIVersion == kubeflowv1.GroupVersion.String() {
			return ref.UID
		}
	}
	return ""
}

// workloadStatus is the part of a Workload's status backfill reads.
type workloadStatus struct {
	Conditions []metav1.Condition `json:"conditions"`
	Admission  *struct {
		ClusterQueue string `json:"clusterQueue"`
	} `json:"admission"`
}

func workloadOf(item *unstructured.Unstructured) (*Workload, error) {
	var status workloadStatus
	raw, _, _ := unstructured.NestedMap(item.Object, "status")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status); err != nil {
		return nil, fmt.Errorf("reading the status of Workload %s/%s: %w", item.GetNamespace(), item.GetName(), err)
	}
	w := &Workload{Name: item.GetName(), Conditions: status.Conditions}
	if status.Admission != nil {
		w.ClusterQueue = status.Admission.ClusterQueue
	}
	return w, nil
}
