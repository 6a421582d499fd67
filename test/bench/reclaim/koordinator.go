package main

import (
	"cmp"
	"slices"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// Koordinator's defaults (docs/RECLAIM.md in the shared docs): the
// slo-controller's batch resources with the "usage" policy, and the
// koordlet's CPU suppress and BE memory eviction.
const (
	koordCPUReclaimPercent, koordMemoryReclaimPercent = 60, 65
	// koordAverageMinutes: NodeMetric reports a 300 s average.
	koordAverageMinutes = 5
	// The batch resources are rewritten when they changed by more than
	// koordDiffThreshold, or koordUpdateMinutes passed.
	koordDiffThreshold = 0.10
	koordUpdateMinutes = 5
	// CPU suppress: offline pods get capacity x 65% - online use -
	// max(system, reserved), at least 2 cores (the cpuset policy's floor).
	koordSuppressPercent = 65
	koordSuppressMinCPU  = 2
	// Memory eviction at 70% node memory use, down to 68%.
	koordMemoryEvictPercent, koordMemoryEvictLowerPercent = 70, 68
)

type koordinator struct {
	spec   nodeSpec
	traces *traces
}

func (k *koordinator) name() string     { return "Koordinator defaults" }
func (k *koordinator) bestEffort() bool { return true }

// room: kube-scheduler fits batch pods into the node's batch allocatable
// less what batch pods there request. Nothing is evicted when the batch
// allocatable drops below what they hold.
func (k *koordinator) room(n *node) reclaim.Resources {
	return n.published.Sub(n.held).NonNegative()
}

// cpuCap is CPU suppress, the koordlet's 1 s loop: the same minute's
// online use counts.
func (k *koordinator) cpuCap(n *node, t int) float64 {
	c := k.spec.capacity.cpu
	q := c*koordSuppressPercent/100 - k.traces.at(n.index, t).cpu - max(k.spec.system.cpu, k.spec.reserved.cpu)
	return max(q, koordSuppressMinCPU)
}

func (k *koordinator) control(n *node, t int) []*replica {
	batch := k.batch(n.index, t)
	if changed(n.published, batch) || t+1-n.writtenAt >= koordUpdateMinutes {
		n.published, n.writtenAt = batch, t+1
	}
	return k.memoryVictims(n, t)
}

// batch is the "usage" policy: capacity - capacity x (100 - threshold)% -
// max(system, reserved) - online use, the use a 5-minute average.
func (k *koordinator) batch(i, t int) reclaim.Resources {
	c := k.spec.capacity
	margin := resources{cpu: c.cpu * (100 - koordCPUReclaimPercent) / 100, memory: c.memory * (100 - koordMemoryReclaimPercent) / 100}
	system := resources{cpu: max(k.spec.system.cpu, k.spec.reserved.cpu), memory: max(k.spec.system.memory, k.spec.reserved.memory)}
	b := c.sub(margin).sub(system).sub(k.traces.average(i, t, koordAverageMinutes))
	return resources{cpu: max(0, b.cpu), memory: max(0, b.memory)}.exact()
}

// changed: a resource moved by more than the diff threshold of its old
// value.
func changed(old, now reclaim.Resources) bool {
	moved := func(a, b int64) bool { return float64(abs(b-a)) > koordDiffThreshold*float64(a) }
	return moved(old.MilliCPU, now.MilliCPU) || moved(old.Memory, now.Memory)
}

func abs(x int64) int64 { return max(x, -x) }

// memoryVictims is BE memory eviction: at 70% node memory use it releases
// capacity x (use% - 68%), victims the lowest priority (all offline pods
// share one) then the largest memory use, each credited with its own use:
// it knows nothing of jobs.
func (k *koordinator) memoryVictims(n *node, t int) []*replica {
	c := k.spec.capacity.memory
	use := k.traces.at(n.index, t).memory + n.offlineMemory() + k.spec.system.memory
	if use < c*koordMemoryEvictPercent/100 {
		return nil
	}
	need := use - c*koordMemoryEvictLowerPercent/100
	candidates := slices.Clone(n.replicas)
	slices.SortStableFunc(candidates, func(a, b *replica) int {
		return cmp.Or(cmp.Compare(b.memoryUse, a.memoryUse), cmp.Compare(a.name, b.name))
	})
	var victims []*replica
	for _, r := range candidates {
		if need <= 0 {
			break
		}
		victims = append(victims, r)
		need -= r.memoryUse
	}
	return victims
}
