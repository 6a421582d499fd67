package doctor

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// Reclaimed capacity as the nodes show it: what each publishes of
// backfill.dev/batch-cpu (milli-CPU) and backfill.dev/batch-memory (bytes)
// in its allocatable, and the manager's explanation of that number in the
// annotation backfill.dev/reclaim. The numbers are shown in the units
// people request, CPU and memory, since that is what a TFJob's template
// asks for before the operator moves it to the batch resources.

// isBatchResource reports whether name is one of the reclaimed-capacity
// resources.
func isBatchResource(name corev1.ResourceName) bool {
	return name == colocation.ResourceBatchCPU || name == colocation.ResourceBatchMemory
}

// amountOf is r's amount of a batch resource.
func amountOf(r colocation.Resources, name corev1.ResourceName) int64 {
	if name == colocation.ResourceBatchCPU {
		return r.MilliCPU
	}
	return r.Memory
}

// batchQuantity is a quantity of a batch resource as an amount, milli-CPU
// or bytes: batch-cpu counts milli-CPU in whole units.
func batchQuantity(l corev1.ResourceList, name corev1.ResourceName) int64 {
	q, ok := l[name]
	if !ok {
		return 0
	}
	return q.Value()
}

// showAmount writes an amount of a batch resource as a cpu or memory
// quantity: "2500m", "4", "12Gi"; negative amounts as 0.
func showAmount(name corev1.ResourceName, v int64) string {
	if name == colocation.ResourceBatchCPU {
		return colocation.CPUString(max(v, 0))
	}
	return colocation.MemoryString(max(v, 0))
}

// showBatch writes an amount with its kind: "4 CPU", "12Gi memory".
func showBatch(name corev1.ResourceName, v int64) string {
	if name == colocation.ResourceBatchCPU {
		return showAmount(name, v) + " CPU"
	}
	return showAmount(name, v) + " memory"
}

// showResources writes the nonzero parts of r: "4 CPU and 8Gi memory".
func showResources(r colocation.Resources) string {
	switch {
	case r.MilliCPU > 0 && r.Memory > 0:
		return showBatch(colocation.ResourceBatchCPU, r.MilliCPU) + " and " + showBatch(colocation.ResourceBatchMemory, r.Memory)
	case r.Memory > 0:
		return showBatch(colocation.ResourceBatchMemory, r.Memory)
	}
	return showBatch(colocation.ResourceBatchCPU, r.MilliCPU)
}

// publishes reports whether a node offers any reclaimed capacity.
func publishes(n *corev1.Node) bool {
	return !colocation.BatchOf(n.Status.Allocatable).IsZero()
}

// reclaimCeiling is the most reclaimed capacity a node could ever offer:
// its capacity less the manager's margin and what its kubelet reserves,
// with no online use at all, as the manager reckons it when it tells a
// TFJob its pod can never fit (ExceedsReclaimableCapacity). Without an
// explanation the margin is unknown, and the node's cpu and memory
// allocatable bound it.
func reclaimCeiling(n *corev1.Node) colocation.Resources {
	if e, ok, err := reclaim.ReadExplanation(n.Annotations); err == nil && ok && !e.Capacity.IsZero() {
		return e.Capacity.Sub(e.Margin).Sub(e.Reserved).NonNegative()
	}
	cpu, memory := n.Status.Allocatable[corev1.ResourceCPU], n.Status.Allocatable[corev1.ResourceMemory]
	return colocation.Resources{MilliCPU: cpu.MilliValue(), Memory: memory.Value()}
}

// whyPublished says why a node publishes what it does of one batch
// resource, from its explanation: the formula with every input at the
// manager's last decision, or why the number is frozen.
func whyPublished(n *corev1.Node, name corev1.ResourceName, now time.Time) string {
	e, ok, err := reclaim.ReadExplanation(n.Annotations)
	switch {
	case err != nil:
		return fmt.Sprintf("node %s's explanation is unreadable (%v)", n.Name, err)
	case !ok:
		return fmt.Sprintf("node %s has no explanation (annotation %s): no manager with --reclaim has decided it", n.Name, reclaim.ExplanationAnnotation)
	case e.State == reclaim.StateStale:
		return fmt.Sprintf("node %s's reclaimed capacity is frozen, for %s: %s", n.Name, age(now, e.At), e.Why)
	}
	v := func(r colocation.Resources) string { return showAmount(name, amountOf(r, name)) }
	what := "CPU"
	if name == colocation.ResourceBatchMemory {
		what = "memory"
	}
	s := fmt.Sprintf("on %s, reclaimed %s = capacity %s - margin %s - system %s - online peak %s - offline pods on requests %s = target %s, published %s (%s, %s ago)",
		n.Name, what, v(e.Capacity), v(e.Margin), v(e.Reserved.Max(e.System)), v(e.OnlinePeak), v(e.OnRequests), v(e.Target), v(e.Published), e.Why, age(now, e.At))
	if e.CooldownUntil.After(now) {
		s += fmt.Sprintf("; it offers no room to new offline pods for %s more, after an eviction", e.CooldownUntil.Sub(now).Round(time.Second))
	}
	return s
}
