package tfjob

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// RetiredLabel marks what the operator never needs again, so that the
// manager's cache selects it out and a long history costs the manager
// nothing:
//   - a replica pod that succeeded, whose success its job's status records
//     (succeededIndexes), and that cleanPodPolicy keeps. The patch that
//     releases the pod sets the label, so it costs no write of its own;
//   - a finished job without ttlSecondsAfterFinished whose finishing work
//     is done, and the pods, services and PodGroup it keeps. The job's
//     label value is its final state, Succeeded or Failed, which
//     backfill_tfjobs counts.
//
// Removing the label from a job brings it back; it is retired again.
const RetiredLabel = "backfill.dev/retired"

// retireSucceededPods marks the succeeded pods the pass releases and keeps
// to be retired with their release. Under cleanPodPolicy All they stay in
// the cache, to be deleted when the job finishes.
func (p *plan) retireSucceededPods(job *kubeflowv1.TFJob, pol policy) {
	if cleanPodPolicy(job, pol) == kubeflowv1.CleanPodPolicyAll {
		return
	}
	for _, pod := range p.releasePods {
		if pod.Status.Phase == corev1.PodSucceeded && !p.deleting(pod) {
			if p.retirePods == nil {
				p.retirePods = map[types.UID]bool{}
			}
			p.retirePods[pod.UID] = true
		}
	}
}

// retireJobWhenDone plans to retire a job that finished in an earlier pass
// when this pass has nothing left to do for it: every pod it keeps has ended and is
// released, so its status can no longer change. It waits until the job
// finished pol.retireAfter ago, so that Prometheus scrapes the job's final
// state. A job with ttlSecondsAfterFinished stays until the TTL deletes
// it.
func (p *plan) retireJobWhenDone(job *kubeflowv1.TFJob, obs observed, now time.Time, pol policy) {
	if !isFinished(&job.Status) || job.Spec.RunPolicy.TTLSecondsAfterFinished != nil ||
		!statusEqual(job.Status, p.status) || !p.idle() {
		return
	}
	kept := make([]client.Object, 0, len(obs.pods)+len(obs.services))
	for _, pod := range sortedPods(obs.pods) {
		ended := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
		if !ended || pod.DeletionTimestamp != nil || hasTrackingFinalizer(pod) {
			return
		}
		kept = append(kept, pod)
	}
	for _, svc := range obs.services {
		kept = append(kept, svc)
	}
	if wait := lastCondition(&job.Status).LastTransitionTime.Add(pol.retireAfter).Sub(now); wait > 0 {
		p.requeueAt(wait)
		return
	}
	if obs.hasPodGroup {
		group := EmptyPodGroup(pol.gang)
		group.SetNamespace(job.Namespace)
		group.SetName(job.Name)
		kept = append(kept, group)
	}
	p.retiring, p.kept = true, kept
}

// idle reports whether the plan writes nothing besides its status.
func (p *plan) idle() bool {
	return len(p.createPods) == 0 && len(p.createServices) == 0 && len(p.deletePods) == 0 &&
		len(p.notices) == 0 && len(p.releasePods) == 0 && len(p.deleteServices) == 0 &&
		!p.deleteJob && !p.createPodGroup && p.requeueAfter == 0
}

// retirePatch releases a pod and retires it in one write.
var retirePatch = []byte(`{"metadata":{"labels":{"` + RetiredLabel + `":"true"},"$deleteFromPrimitiveList/finalizers":["` + trackingFinalizer + `"]}}`)

// labelRetired carries out a planned retirement (retireJobWhenDone): it
// labels what a finished job keeps, then the job itself, so that a crash
// between the two leaves the job in the cache to finish the work.
func (r *Reconciler) labelRetired(ctx context.Context, job *kubeflowv1.TFJob, kept []client.Object) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeConcurrency)
	for _, obj := range kept {
		g.Go(func() error {
			err := r.client.Patch(gctx, obj, client.RawPatch(types.MergePatchType, retiredLabelPatch("true")))
			return r.ignoreGone(err, "retiring", obj.GetName())
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	state := string(lastCondition(&job.Status).Type)
	r.opts.Retiring.Add(job.UID)
	if err := r.client.Patch(ctx, job, client.RawPatch(types.MergePatchType, retiredLabelPatch(state))); err != nil {
		r.opts.Retiring.Forget(job.UID)
		return r.ignoreGone(err, "retiring TFJob", job.Name)
	}
	return nil
}

// retiredLabelPatch sets RetiredLabel to value.
func retiredLabelPatch(value string) []byte {
	return fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, RetiredLabel, value)
}
