package reclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// ReasonExceedsReclaimableCapacity is the event of a TFJob whose pod asks
// for more reclaimed capacity than any node could ever offer.
const ReasonExceedsReclaimableCapacity = "ExceedsReclaimableCapacity"

// ceiling is the most reclaimed capacity any node could offer: its
// capacity less the margin and what the kubelet reserves, with no online
// use at all.
func ceiling(nodes []Node, s Settings) Resources {
	var most Resources
	for _, n := range nodes {
		most = most.Max(n.Capacity.Sub(s.Margin.of(n.Capacity)).Sub(n.Capacity.Sub(n.Allocatable).NonNegative()))
	}
	return most
}

// warnUnfittable tells the TFJob of every unscheduled pod that asks for
// more reclaimed capacity than any node could ever offer: it would wait
// forever (more than most, the ceiling of every node). Each pod is told
// once. With no node known (most zero) nothing can be said, as the
// TFJob's CapacityPending condition holds too: no pod is read and no job
// told.
func (c *Controller) warnUnfittable(ctx context.Context, most Resources) error {
	if most.IsZero() {
		return nil
	}
	var pods corev1.PodList
	// Read only, so not copied.
	if err := c.client.List(ctx, &pods, client.MatchingLabels{kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName}, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing TFJob pods: %w", err)
	}
	live := map[string]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		live[string(p.UID)] = true
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || c.warned[string(p.UID)] {
			continue
		}
		asks := colocation.BatchOf(resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
		if most.Covers(asks) {
			continue
		}
		c.warned[string(p.UID)] = true
		job, ok := colocation.ControllingTFJob(p)
		if !ok {
			continue
		}
		tfjob := &kubeflowv1.TFJob{}
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: job}, tfjob); err != nil {
			continue
		}
		c.recorder.Eventf(tfjob, nil, corev1.EventTypeWarning, ReasonExceedsReclaimableCapacity, "Schedule",
			"Pod %s asks for %s of reclaimed capacity, more than any node can ever offer (at most %s: a node's capacity less the margin and what its kubelet reserves): lower the template's cpu or memory requests, or run the job on requested capacity with the annotation %s: %s",
			p.Name, asks, most, colocation.CapacityAnnotation, colocation.CapacityRequested)
	}
	for uid := range c.warned {
		if !live[uid] {
			delete(c.warned, uid)
		}
	}
	return nil
}
