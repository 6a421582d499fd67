package main

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// Koordinator (docs/RECLAIM.md and PROTECTION.md in the shared docs): the
// slo-controller's batch resources with the "usage" policy, and the
// koordlet's CPU suppress and BE memory eviction.
const (
	// koordAverageMinutes: NodeMetric reports a 300 s average.
	koordAverageMinutes = 5
	// The batch resources are rewritten when they changed by more than
	// koordDiffThreshold, or koordUpdateMinutes passed.
	koordDiffThreshold = 0.10
	koordUpdateMinutes = 5
	// koordSuppressMinCPU is CPU suppress's floor, the cpuset policy's
	// two cores.
	koordSuppressMinCPU = 2
	// koordAbove is how far above the reclaim thresholds Koordinator's
	// defaults put CPU suppress (65 over 60) and memory eviction (70 over
	// 65): a sweep of the thresholds keeps the offsets.
	koordAbove = 5
)

// koordKnobs are Koordinator's reclaim thresholds, percent of capacity:
// the batch resources keep 100 - threshold of every node free of them.
type koordKnobs struct{ cpu, memory int }

// koordDefaults are Koordinator's shipped thresholds.
var koordDefaults = koordKnobs{cpu: 60, memory: 65}

// suppress is the CPU suppress threshold: offline pods get capacity x
// suppress% - online use - max(system, reserved).
func (k koordKnobs) suppress() int { return min(100, k.cpu+koordAbove) }

// memoryEvict is the node memory use at which offline pods are evicted,
// down to 2 points below.
func (k koordKnobs) memoryEvict() int { return min(99, k.memory+koordAbove) }

func (k koordKnobs) String() string {
	return fmt.Sprintf("thresholds %d/%d, suppress %d, evict %d", k.cpu, k.memory, k.suppress(), k.memoryEvict())
}

type koordinator struct {
	spec       nodeSpec
	traces     *traces
	source     *usageSource
	thresholds koordKnobs
	// cpuset: CPU suppress puts offline pods on cores of their own (its
	// default policy), which the harm model reads on the cores curve when
	// the record has one; else as a ceiling, like a CFS quota.
	cpuset bool
}

func newKoordinator(spec nodeSpec, tr *traces, src *usageSource, k koordKnobs) *koordinator {
	return &koordinator{spec: spec, traces: tr, source: src, thresholds: k}
}

func (k *koordinator) name() string     { return "Koordinator" }
func (k *koordinator) knobs() string    { return k.thresholds.String() }
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
	q := c*float64(k.thresholds.suppress())/100 - k.traces.at(n.index, t).cpu - max(k.spec.system.cpu, k.spec.reserved.cpu)
	return max(q, koordSuppressMinCPU)
}

// protection: on cores of their own whenever offline pods run (the
// cpuset policy confines them whether or not its size binds), else a
// ceiling when it binds.
func (k *koordinator) protection(_ *node, capped bool) protection {
	switch {
	case k.cpuset:
		return byCores
	case capped:
		return byAgent
	}
	return byWeights
}

// protect is BE memory eviction, the koordlet's 1 s loop. It kills the
// containers before it calls the Eviction API (koordinator issue 1757),
// so no PodDisruptionBudget holds it back and the memory is free at once.
func (k *koordinator) protect(n *node, t int, ev evictor) {
	for _, r := range k.memoryVictims(n, t) {
		ev.kill(r)
	}
}

// control is the slo-controller writing the node's batch resources.
func (k *koordinator) control(n *node, t int, _ evictor) {
	batch := k.batch(n.index, t)
	if changed(n.published, batch) || t+1-n.writtenAt >= koordUpdateMinutes {
		n.published, n.writtenAt = batch, t+1
	}
}

// batch is the "usage" policy: capacity - capacity x (100 - threshold)% -
// max(system, reserved) - online use, the use a 5-minute average from the
// usage source; nothing before its first sample.
func (k *koordinator) batch(i, t int) reclaim.Resources {
	newest := k.source.newest(t)
	if newest < 0 {
		return reclaim.Resources{}
	}
	c := k.spec.capacity
	margin := resources{cpu: c.cpu * float64(100-k.thresholds.cpu) / 100, memory: c.memory * float64(100-k.thresholds.memory) / 100}
	system := resources{cpu: max(k.spec.system.cpu, k.spec.reserved.cpu), memory: max(k.spec.system.memory, k.spec.reserved.memory)}
	b := c.sub(margin).sub(system).sub(k.source.seen.average(i, newest, koordAverageMinutes))
	return resources{cpu: max(0, b.cpu), memory: max(0, b.memory)}.exact()
}

// changed: a resource moved by more than the diff threshold of its old
// value.
func changed(old, now reclaim.Resources) bool {
	moved := func(a, b int64) bool { return float64(abs(b-a)) > koordDiffThreshold*float64(a) }
	return moved(old.MilliCPU, now.MilliCPU) || moved(old.Memory, now.Memory)
}

func abs(x int64) int64 { return max(x, -x) }

// memoryVictims is BE memory eviction: at the threshold of node memory
// use it releases capacity x (use% - threshold% + 2%), victims the lowest
// priority (all offline pods share one) then the largest memory use, each
// credited with its own use: it knows nothing of jobs.
func (k *koordinator) memoryVictims(n *node, t int) []*replica {
	c := k.spec.capacity.memory
	use := k.traces.at(n.index, t).memory + n.offlineMemory() + k.spec.system.memory
	evictAt := float64(k.thresholds.memoryEvict())
	if use < c*evictAt/100 {
		return nil
	}
	need := use - c*(evictAt-2)/100
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
