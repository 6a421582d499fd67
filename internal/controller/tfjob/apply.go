package tfjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// writeConcurrency bounds the writes one pass sends at once: a job's pods
// are created together rather than one by one (Kubeflow v1 #2361), without
// flooding the apiserver.
const writeConcurrency = 16

// apply carries out the writes of a plan that follow its status: deletes
// and finalizer releases first, then creates. It returns what the cache
// must show before the next pass.
func (r *Reconciler) apply(ctx context.Context, job *kubeflowv1.TFJob, p *plan) (*pending, error) {
	pend := &pending{created: sets.New[string](), deleted: sets.New[types.UID](), released: sets.New[types.UID](), noticed: sets.New[types.UID]()}
	if p.retiring {
		// An idle plan: retiring is its only write, and nothing to wait for.
		return pend, r.labelRetired(ctx, job, p.kept)
	}
	deleted, err := r.applyDeletes(ctx, job, p, pend)
	if err != nil {
		return pend, err
	}

	var created []string
	// No write cancels its siblings when it fails: a ResourceQuota charges
	// an object in admission, and a create cancelled after that stores
	// nothing but keeps the charge until the quota controller recounts,
	// minutes later, refusing the job's pods meanwhile.
	var g errgroup.Group
	g.SetLimit(writeConcurrency)
	for _, pod := range p.releasePods {
		pend.released.Insert(pod.UID)
		g.Go(func() error { return r.releasePod(ctx, pod, p.retirePods[pod.UID]) })
	}
	for _, n := range p.notices {
		pend.noticed.Insert(n.pod.UID)
		g.Go(func() error { return r.notify(ctx, n) })
	}
	for _, id := range p.createServices {
		svc := serviceFor(job, id.rtype, id.index)
		pend.created.Insert(serviceKey(svc.Name))
		g.Go(func() error { return r.create(ctx, svc) })
	}
	if p.createPodGroup {
		// Before its pods: the scheduler holds them until it exists.
		if err := r.create(ctx, podGroupFor(job, p.podGroupClass, r.opts.Gang)); err != nil {
			return pend, err
		}
	}
	opts, err := r.podOptionsFor(ctx, job, p)
	if err != nil {
		return pend, err
	}
	for _, id := range p.createPods {
		pod, err := podFor(job, id.rtype, id.index, opts)
		if err != nil {
			return pend, err
		}
		pend.created.Insert(podKey(pod.Name))
		created = append(created, pod.Name)
		g.Go(func() error { return r.create(ctx, pod) })
	}
	err = g.Wait()
	if len(created) > 0 {
		p.emit(corev1.EventTypeNormal, "SuccessfulCreatePod", "Created pods: "+summarise(created))
	}
	if len(deleted) > 0 {
		p.emit(corev1.EventTypeNormal, "SuccessfulDeletePod", "Deleted pods: "+summarise(deleted))
	}
	return pend, err
}

// applyDeletes deletes the pods, services and job the plan deletes, and
// waits for the deletes. It returns the names of the pods deleted.
func (r *Reconciler) applyDeletes(ctx context.Context, job *kubeflowv1.TFJob, p *plan, pend *pending) ([]string, error) {
	var deleted []string
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeConcurrency)
	for _, pod := range p.deletePods {
		pend.deleted.Insert(pod.UID)
		deleted = append(deleted, pod.Name)
		g.Go(func() error { return r.deletePod(gctx, pod) })
	}
	for _, svc := range p.deleteServices {
		g.Go(func() error {
			return r.ignoreGone(r.client.Delete(gctx, svc, client.Preconditions{UID: &svc.UID}), "deleting service", svc.Name)
		})
	}
	if p.deleteJob {
		g.Go(func() error {
			return r.ignoreGone(r.client.Delete(gctx, job, client.Preconditions{UID: &job.UID}, client.PropagationPolicy("Background")), "deleting TFJob", job.Name)
		})
	}
	return deleted, g.Wait()
}

// podOptionsFor are the settings of the pods the plan creates for the job:
// the manager's, its gang's, and on reclaimed capacity the namespace's
// container rules (read only when there are pods to create).
func (r *Reconciler) podOptionsFor(ctx context.Context, job *kubeflowv1.TFJob, p *plan) (podOptions, error) {
	opts := r.podOptions()
	if p.gangPods {
		opts.podGroup = job.Name
		opts.gang, opts.gangSchedulerName = r.opts.Gang, r.opts.GangSchedulerName
	}
	if len(p.createPods) > 0 && opts.reclaim && colocation.OnReclaimedCapacity(job.Annotations) {
		rules, err := r.containerRules(ctx, job.Namespace)
		if err != nil {
			return opts, err
		}
		opts.rules = rules
	}
	return opts, nil
}

// errCreatingPod marks a pod the apiserver refused to create (a
// ResourceQuota or LimitRange, say), which the job's events report.
var errCreatingPod = errors.New("creating pod")

// create creates a child; AlreadyExists means a previous pass did, since
// names are deterministic.
func (r *Reconciler) create(ctx context.Context, obj client.Object) error {
	err := r.client.Create(ctx, obj)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		if _, ok := obj.(*corev1.Pod); ok {
			return fmt.Errorf("%w %s: %w", errCreatingPod, obj.GetName(), err)
		}
		kind := fmt.Sprintf("%T", obj)
		return fmt.Errorf("creating %s %s: %w", strings.ToLower(kind[strings.LastIndex(kind, ".")+1:]), obj.GetName(), err)
	}
	if pod, ok := obj.(*corev1.Pod); ok && err == nil {
		metrics.PodCreated(pod)
	}
	return nil
}

// podOptions are the manager's settings for the pods it creates.
func (r *Reconciler) podOptions() podOptions {
	opts := podOptions{clusterDomain: r.opts.ClusterDomain, offlinePriorityClass: r.opts.OfflinePriorityClass, reclaim: r.opts.Reclaim, reports: r.opts.Reports}
	if r.opts.GracePeriod > 0 {
		grace := int64(r.opts.GracePeriod / time.Second)
		opts.gracePeriod = &grace
	}
	return opts
}

// deletePod deletes exactly the pod observed, never a successor of the
// same name.
func (r *Reconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	err := r.client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if err == nil {
		metrics.PodDeleted(pod)
	}
	return r.ignoreGone(err, "deleting pod", pod.Name)
}

// releasePod removes the tracking finalizer, and retires the pod if asked.
// The strategic-merge directive removes exactly ours, whatever else the
// list holds, so it needs no resourceVersion and is safe to repeat.
func (r *Reconciler) releasePod(ctx context.Context, pod *corev1.Pod, retire bool) error {
	patch := releasePatch
	if retire {
		patch = retirePatch
	}
	err := r.client.Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch))
	return r.ignoreGone(err, "releasing pod", pod.Name)
}

var releasePatch = []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + trackingFinalizer + `"]}}`)

// notify writes a stop notice on a pod.
func (r *Reconciler) notify(ctx context.Context, n stopNotice) error {
	patch, err := colocation.StopNoticePatch("", n.reason, n.at)
	if err != nil {
		return err
	}
	err = r.client.Patch(ctx, n.pod, client.RawPatch(types.MergePatchType, patch))
	return r.ignoreGone(err, "noticing pod", n.pod.Name)
}

// releaseOrphans releases the pods of a job that is gone or being deleted,
// so that garbage collection can remove them. uid, when set, limits it to
// the pods of that job.
func (r *Reconciler) releaseOrphans(ctx context.Context, namespace, name string, uid types.UID) error {
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(namespace), client.MatchingFields{jobNameIndex: name}); err != nil {
		return fmt.Errorf("listing pods of deleted TFJob: %w", err)
	}
	var errs []error
	for i := range pods.Items {
		pod := &pods.Items[i]
		owner := ownerUID(pod)
		if !hasTrackingFinalizer(pod) || (uid != "" && owner != uid) {
			continue
		}
		errs = append(errs, r.releasePod(ctx, pod, false))
	}
	return errors.Join(errs...)
}

func ownerUID(pod *corev1.Pod) types.UID {
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return ref.UID
		}
	}
	return ""
}

// ignoreGone treats NotFound, and a failed UID precondition (the object
// was replaced), as done.
func (r *Reconciler) ignoreGone(err error, what, name string) error {
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("%s %s: %w", what, name, err)
}

// summarise lists names for an event message, shortened for large jobs.
func summarise(names []string) string {
	const shown = 5
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}
