package reclaim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// writeConcurrency bounds the node writes a sync sends at once: when
// every node's capacity grows (after a restart, or as online use falls),
// a thousand nodes are written within the interval rather than one by one.
const writeConcurrency = 16

// nodeWrite is a decision to publish on its node.
type nodeWrite struct {
	node     Node
	decision Decision
	before   Explanation
}

// changes reports whether the decision changes what the node offers, its
// state, its cool-down or its hold. Input drift alone writes nothing.
func (w nodeWrite) changes() bool {
	return w.decision.Published != w.node.Published || w.decision.State != w.before.State ||
		!w.decision.CooldownUntil.Equal(w.before.CooldownUntil) || holdChanged(w.before.Online, w.decision.Online)
}

// writeAll publishes the decisions that change something,
// writeConcurrency nodes at once.
func (c *Controller) writeAll(ctx context.Context, writes []nodeWrite) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	slots := make(chan struct{}, writeConcurrency)
	for _, w := range writes {
		if !w.changes() {
			continue
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := c.write(ctx, w.node, w.decision); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// write publishes a decision on its node in one PATCH: the explanation
// annotation, and the batch resources if they changed (capacity and
// allocatable both, since the kubelet resets an extended resource's
// allocatable to its capacity). A node's status subresource keeps the
// metadata a patch sends (only its spec is reset), so a capacity change
// and its explanation go together to nodes/status; an explanation alone
// goes to the node.
func (c *Controller) write(ctx context.Context, n Node, d Decision) error {
	body := map[string]any{"metadata": map[string]any{"annotations": map[string]string{ExplanationAnnotation: d.annotation()}}}
	capacityChanged := d.Published != n.Published && (!d.Published.IsZero() || !n.Published.IsZero())
	if capacityChanged {
		list := map[corev1.ResourceName]resource.Quantity{
			colocation.ResourceBatchCPU:    *resource.NewQuantity(d.Published.MilliCPU, resource.DecimalSI),
			colocation.ResourceBatchMemory: *resource.NewQuantity(d.Published.Memory, resource.BinarySI),
		}
		body["status"] = map[string]any{"capacity": list, "allocatable": list}
	}
	patch, err := json.Marshal(body)
	if err != nil {
		return err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}
	if capacityChanged {
		err = c.client.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, patch))
	} else {
		err = c.client.Patch(ctx, node, client.RawPatch(types.MergePatchType, patch))
	}
	if err != nil {
		return fmt.Errorf("publishing the reclaimed capacity of node %s: %w", n.Name, err)
	}
	metrics.NodeWritten()
	if capacityChanged {
		c.log.V(1).Info("Published reclaimed capacity", "node", n.Name, "cpu", colocation.CPUString(d.Published.MilliCPU), "memory", colocation.MemoryString(d.Published.Memory), "why", d.Why)
	}
	return nil
}
