package reclaim

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// write publishes a decision on its node when it changes what the node
// offers, its state or its cool-down: the batch resources in the node's
// status (capacity and allocatable both, since the kubelet resets an
// extended resource's allocatable to its capacity), then the explanation.
// Input drift alone writes nothing.
func (c *Controller) write(ctx context.Context, n Node, d Decision, before Explanation) error {
	capacityChanged := d.Published != n.Published
	if !capacityChanged && d.State == before.State && d.CooldownUntil.Equal(before.CooldownUntil) {
		return nil
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}
	if capacityChanged && (!d.Published.IsZero() || !n.Published.IsZero()) {
		list := map[corev1.ResourceName]resource.Quantity{
			colocation.ResourceBatchCPU:    *resource.NewQuantity(d.Published.MilliCPU, resource.DecimalSI),
			colocation.ResourceBatchMemory: *resource.NewQuantity(d.Published.Memory, resource.BinarySI),
		}
		patch, err := json.Marshal(map[string]any{"status": map[string]any{"capacity": list, "allocatable": list}})
		if err != nil {
			return err
		}
		if err := c.client.Status().Patch(ctx, node, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			return fmt.Errorf("publishing the reclaimed capacity of node %s: %w", n.Name, err)
		}
		metrics.NodeWritten()
		c.log.V(1).Info("Published reclaimed capacity", "node", n.Name, "cpu", colocation.CPUString(d.Published.MilliCPU), "memory", colocation.MemoryString(d.Published.Memory), "why", d.Why)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{ExplanationAnnotation: d.annotation()}}})
	if err != nil {
		return err
	}
	if err := c.client.Patch(ctx, node, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		return fmt.Errorf("explaining the reclaimed capacity of node %s: %w", n.Name, err)
	}
	metrics.NodeWritten()
	return nil
}
