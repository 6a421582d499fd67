package reclaim

import (
	"context"
	"encoding/json"
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
// PodDisruptionBudgets and the pods' grace periods hold. Each pod is first
// annotated with the stop reason ReclaimedForOnline, which makes the
// operator count its end as that disruption. Both requests carry the pod's
// UID: a replacement of the same name is never evicted in its place. It
// returns the pods the Eviction API refused.
func (c *Controller) evict(ctx context.Context, n Node, d Decision) (refused []Pod, err error) {
	resource := deficitResource(d)
	for _, p := range d.Evict {
		if err := c.markReclaimed(ctx, p); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err) {
				continue // gone, or replaced: what it held is released
			}
			return refused, err
		}
		uid := types.UID(p.UID)
		eviction := &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}},
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
		err := c.client.SubResource("eviction").Create(ctx, pod, eviction)
		switch {
		case apierrors.IsTooManyRequests(err):
			refused = append(refused, p)
			metrics.Evicted(resource, metrics.EvictionRefused)
			c.log.Info("The Eviction API refused to evict an offline pod (a PodDisruptionBudget?): the node keeps offering what it holds", "pod", p.Namespace+"/"+p.Name, "node", n.Name, "error", err.Error())
			continue
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			continue
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

// markReclaimed writes the stop reason on the pod, with its UID as a
// precondition.
func (c *Controller) markReclaimed(ctx context.Context, p Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         p.UID,
		"annotations": map[string]string{colocation.StopReasonAnnotation: ReasonReclaimedForOnline},
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
	if d.Held.MilliCPU > d.Target.MilliCPU {
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
		"Evicted pod %s from node %s for online pods: offline pods there held %s, more than the %s it can spare now (online peak %s); the pod restarts elsewhere, not charged to backoffLimit",
		p.Name, n.Name, d.Held, d.Target, d.OnlinePeak)
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
