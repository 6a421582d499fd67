package reclaim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// ReasonReclaimedForOnline is the reason of the events of an eviction for
// online protection, and of the disruption it counts on the TFJob.
const ReasonReclaimedForOnline = colocation.ReasonReclaimedForOnline

// evict evicts a decision's victims through the Eviction API, so that
// PodDisruptionBudgets and the pods' grace periods hold. A pod the API
// would evict (a dry run says so) is first annotated with the stop reason
// ReclaimedForOnline, which makes the operator count its end as that
// disruption; a pod it refuses is left unmarked. Every request carries the
// pod's UID: a replacement of the same name is never evicted in its place.
// It returns the pods the Eviction API refused.
func (c *Controller) evict(ctx context.Context, n Node, d Decision) (refused []Pod, err error) {
	resource := deficitResource(d)
	for _, p := range d.Evict {
		err := c.eviction(ctx, p, true)
		if err == nil {
			if err = c.markReclaimed(ctx, p, true); err == nil {
				if err = c.eviction(ctx, p, false); apierrors.IsTooManyRequests(err) {
					// Refused between the dry run and now: a later
					// disruption of the pod is not this one.
					err = errors.Join(err, c.markReclaimed(ctx, p, false))
				}
			}
		}
		switch {
		case apierrors.IsTooManyRequests(err):
			refused = append(refused, p)
			metrics.Evicted(resource, metrics.EvictionRefused)
			c.log.Info("The Eviction API refused to evict an offline pod (a PodDisruptionBudget?): the node keeps offering what it holds", "pod", p.Namespace+"/"+p.Name, "node", n.Name, "error", err.Error())
			continue
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err):
			continue // gone, or replaced: what it held is released
		case err != nil:
			return refused, fmt.Errorf("evicting %s/%s from node %s: %w", p.Namespace, p.Name, n.Name, err)
		}
		metrics.Evicted(resource, metrics.EvictionEvicted)
		c.log.Info("Evicted an offline pod for online work", "pod", p.Namespace+"/"+p.Name, "node", n.Name,
			"held", d.Held.String(), "target", d.Target.String(), "onlinePeak", d.OnlinePeak.String())
		c.eventOnJob(ctx, p, n, d)
	}
	return refused, nil
}

// eviction asks the Eviction API to evict exactly the pod p (its UID a
// precondition), or with dryRun only whether it would.
func (c *Controller) eviction(ctx context.Context, p Pod, dryRun bool) error {
	uid := types.UID(p.UID)
	opts := &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}, DeleteOptions: opts}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
	return c.client.SubResource("eviction").Create(ctx, pod, eviction)
}

// markReclaimed writes the stop reason on the pod, or takes it off again,
// with its UID as a precondition.
func (c *Controller) markReclaimed(ctx context.Context, p Pod, mark bool) error {
	var reason any // null removes the annotation
	if mark {
		reason = ReasonReclaimedForOnline
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         p.UID,
		"annotations": map[string]any{colocation.StopReasonAnnotation: reason},
	}})
	if err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
	return c.client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch))
}

// deficitResource names the resource whose deficit chose the victims:
// cpu, unless only memory was short.
func deficitResource(d Decision) string {
	if d.Need.MilliCPU > 0 {
		return "cpu"
	}
	return "memory"
}

// eventOnJob tells the evicted pod's TFJob why.
func (c *Controller) eventOnJob(ctx context.Context, p Pod, n Node, d Decision) {
	if p.Job == nil {
		return
	}
	job := &kubeflowv1.TFJob{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: p.Job.Namespace, Name: p.Job.Name}, job); err != nil {
		return
	}
	c.recorder.Eventf(job, nil, corev1.EventTypeWarning, ReasonReclaimedForOnline, "Evict",
		"Evicted pod %s from node %s for online pods: they use %s there (CPU that lasted, memory at its peak), leaving less than the eviction margin beside the %s offline pods held, of which %s must go; the pod restarts elsewhere, not charged to backoffLimit",
		p.Name, n.Name, Resources{MilliCPU: d.OnlineLasting.MilliCPU, Memory: d.OnlinePeak.Memory}, d.Held, d.Need)
}

// stateChanged tells a node's events when its capacity freezes on stale
// usage or follows usage again.
func (c *Controller) stateChanged(node string, before State, d Decision) {
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, UID: types.UID(node)}}
	switch {
	case d.State == StateStale:
		c.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "ReclaimFrozen", "Freeze",
			"%s; reclaimed capacity stays at %s, nothing grows or is evicted until usage is current", d.Why, d.Published)
	case before == StateStale:
		c.recorder.Eventf(obj, nil, corev1.EventTypeNormal, "ReclaimResumed", "Resume",
			"Usage is current again: reclaimed capacity follows it (%s)", d.Why)
	}
}
