package metrics

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
)

// Options say what the manager's metrics cover.
type Options struct {
	// OfflinePriorityClass is the manager's --offline-priority-class: pods
	// of this class are offline, and so are the TFJobs whose pods name none.
	OfflinePriorityClass string
	// View, when set, is the cluster view the co-location state metrics
	// report (--colocation-metrics).
	View *clusterview.View
	// RetiredLabel marks the TFJobs the manager's cache leaves out; its
	// value is the job's final phase. backfill_tfjobs counts them too.
	RetiredLabel string
	// Retiring is told by the TFJob controller of the jobs it retires, so
	// that their leaving the cache is not counted as a deletion.
	Retiring *RetiringJobs
}

// Setup registers the metrics and connects them to a manager: the
// backfill_tfjobs gauge and the per-TFJob gauges read the manager's cache,
// and, while the manager leads, the cache's informers count the TFJobs
// deleted and the containers of TFJob pods restarted in place. Neither is a
// change a reconcile pass writes: a deleted job has no pass, and an
// in-place restart is the kubelet's. With opts.View, the leader also
// reports the cluster view's nodes and pods as the co-location metrics.
func Setup(mgr manager.Manager, opts Options) error {
	Register()
	retired := newRetiredJobs(opts.RetiredLabel, countDeleted)
	jobPhases.use(mgr.GetCache(), retired, mgr.Elected())
	jobState.use(mgr.GetCache(), mgr.Elected(), opts.OfflinePriorityClass)
	meta, err := metadata.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("metrics: metadata client: %w", err)
	}
	// A plain runnable runs only on the leader.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		go retired.run(ctx, meta)
		return watch(ctx, mgr.GetCache(), opts.Retiring)
	})); err != nil {
		return err
	}
	if opts.View != nil {
		colocationState.use(opts.View)
	}
	return nil
}

// watch counts from the cache's informers until ctx ends; the TFJobs
// leaving for retiring are retired, not deleted.
func watch(ctx context.Context, c cache.Cache, retiring *RetiringJobs) error {
	jobs, err := c.GetInformer(ctx, &kubeflowv1.TFJob{})
	if err != nil {
		return fmt.Errorf("metrics: TFJob informer: %w", err)
	}
	pods, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return fmt.Errorf("metrics: pod informer: %w", err)
	}
	// The informers replay their objects as additions, which count nothing.
	jobHandler, err := jobs.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) { jobDeleted(obj, retiring) }})
	if err != nil {
		return fmt.Errorf("metrics: watching TFJob deletions: %w", err)
	}
	podHandler, err := pods.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: podUpdated})
	if err != nil {
		return errors.Join(fmt.Errorf("metrics: watching pod restarts: %w", err), jobs.RemoveEventHandler(jobHandler))
	}
	<-ctx.Done()
	return errors.Join(jobs.RemoveEventHandler(jobHandler), pods.RemoveEventHandler(podHandler))
}

// jobDeleted counts a TFJob the informer saw deleted, if this operator
// manages it and did not retire it (it is not among retiring). obj is the
// job, or a tombstone when the informer missed the deletion and learned of
// it by listing again.
func jobDeleted(obj any, retiring *RetiringJobs) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	job, ok := obj.(*kubeflowv1.TFJob)
	if !ok {
		return
	}
	if m := job.Spec.RunPolicy.ManagedBy; m != nil && *m != kubeflowv1.ManagedByTrainingOperator {
		return
	}
	if retiring.done(job.UID) {
		return
	}
	countDeleted(job.Namespace)
}

// RetiringJobs holds the jobs the operator is retiring: their leaving the
// cache is no deletion. (The watch tells of a job that no longer matches
// the cache's selector by a deletion of its previous version, which does
// not carry the retired label.) The TFJob controller adds to it and the
// watch of TFJob deletions reads it; whoever wires the two makes one with
// NewRetiringJobs and hands it to both. A nil *RetiringJobs holds nothing
// and ignores what it is told.
type RetiringJobs struct {
	mu   sync.Mutex
	uids map[types.UID]struct{}
}

// NewRetiringJobs returns an empty set of retiring jobs.
func NewRetiringJobs() *RetiringJobs {
	return &RetiringJobs{uids: map[types.UID]struct{}{}}
}

// Add tells that the operator is about to retire a job; Forget that it
// failed to.
func (r *RetiringJobs) Add(uid types.UID) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.uids[uid] = struct{}{}
}

// Forget undoes Add.
func (r *RetiringJobs) Forget(uid types.UID) {
	r.done(uid)
}

// done forgets a retiring job and reports whether it was one.
func (r *RetiringJobs) done(uid types.UID) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.uids[uid]
	delete(r.uids, uid)
	return ok
}

// countDeleted counts a deleted TFJob. Only the jobs this operator manages
// are ever retired, so a retired one that is deleted always counts.
func countDeleted(namespace string) {
	jobsDeleted.WithLabelValues(namespace, Framework).Inc()
}

// podUpdated counts the containers of a TFJob pod that the kubelet
// restarted between two versions of the pod.
func podUpdated(oldObj, newObj any) {
	before, ok1 := oldObj.(*corev1.Pod)
	after, ok2 := newObj.(*corev1.Pod)
	if !ok1 || !ok2 || !ownedByTFJob(after) {
		return
	}
	if n := inPlaceRestarts(before, after); n > 0 {
		replicaRestarts.WithLabelValues(string(CauseInPlace)).Add(float64(n))
	}
}

// inPlaceRestarts is how much the restart counts of a pod's containers
// grew from one version of the pod to the next.
func inPlaceRestarts(before, after *corev1.Pod) int32 {
	was := map[string]int32{}
	for _, s := range before.Status.ContainerStatuses {
		was[s.Name] = s.RestartCount
	}
	var n int32
	for _, s := range after.Status.ContainerStatuses {
		if grew := s.RestartCount - was[s.Name]; grew > 0 {
			n += grew
		}
	}
	return n
}

func ownedByTFJob(pod *corev1.Pod) bool {
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == kubeflowv1.Kind && ref.APIVersion == kubeflowv1.GroupVersion.String() {
			return true
		}
	}
	return false
}

// PodCreated counts a replica pod the operator created.
func PodCreated(pod *corev1.Pod) {
	podsCreated.WithLabelValues(replicaTypeLabel(pod.Labels[kubeflowv1.ReplicaTypeLabel])).Inc()
}

// PodDeleted counts a replica pod the operator deleted.
func PodDeleted(pod *corev1.Pod) {
	podsDeleted.WithLabelValues(replicaTypeLabel(pod.Labels[kubeflowv1.ReplicaTypeLabel])).Inc()
}
