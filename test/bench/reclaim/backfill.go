package main

import (
	"fmt"
	"math"
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// backfill is backfill's reclaimed capacity: reclaim.Decide, every
// minute, for every node, on usage from a delayed source; with its node
// agent, or without (offline pods BestEffort, kept off online CPU by the
// kernel's weights alone).
type backfill struct {
	spec     nodeSpec
	traces   *traces
	source   *usageSource
	settings reclaim.Settings
	// agent is the node agent's settings; nil: no agent.
	agent *agentSettings
	// signal is how the manager hears online pods.
	signal signalSettings
	// pods is reused from node to node.
	pods []reclaim.Pod
}

func newBackfill(spec nodeSpec, tr *traces, src *usageSource, s reclaim.Settings, agent *agentSettings) *backfill {
	return &backfill{spec: spec, traces: tr, source: src, settings: s, agent: agent}
}

func (b *backfill) name() string {
	if b.agent != nil {
		return "backfill + agent"
	}
	return "backfill"
}

func (b *backfill) knobs() string {
	return backfillKnobs(b.settings)
}

func (b *backfill) bestEffort() bool { return true }

// room: kube-scheduler fits offline pods into the published batch
// capacity less what they hold there, terminating ones included.
func (b *backfill) room(n *node) reclaim.Resources {
	return n.published.Sub(n.held).NonNegative()
}

// cpuCap is the agent's ceiling, decided by its own code on the use of
// the minute; without it none.
func (b *backfill) cpuCap(n *node, t int) float64 {
	if b.agent == nil {
		return math.Inf(1)
	}
	if n.governor == nil {
		n.governor = newNodeGovernor(*b.agent, b.spec.capacity.cpu)
	}
	online := min(b.traces.at(n.index, t).cpu, b.spec.capacity.cpu-b.spec.system.cpu)
	ceiling, _ := n.governor.minute(online, b.spec.system.cpu)
	return ceiling
}

// protection: with the agent, the agent's whenever it runs (it keeps
// offline pods in the idle class whether or not its ceiling applies, and
// the record's agent conditions measure it whole, at the fill it left);
// without, the kernel's weights.
func (b *backfill) protection(*node, bool) protection {
	if b.agent != nil {
		return byAgent
	}
	return byWeights
}

// protect is the agent's memory eviction: above its threshold of the
// node's memory in use, offline pods ranked as the manager ranks them
// (least work lost first), each credited with what it uses, through the
// Eviction API without notice.
func (b *backfill) protect(n *node, t int, ev evictor) {
	if b.agent == nil {
		return
	}
	used := b.traces.at(n.index, t).memory + n.offlineMemory() + b.spec.system.memory
	releasing := 0.0
	for _, p := range n.terminating {
		releasing += p.memory
	}
	need := b.agent.memoryNeed(b.spec.capacity.memory, used, releasing)
	if need <= 0 {
		return
	}
	candidates := make([]reclaim.Pod, 0, len(n.replicas))
	for _, r := range n.replicas {
		p := podOf(r)
		p.Batch = resources{memory: r.memoryUse}.exact()
		candidates = append(candidates, p)
	}
	for _, v := range reclaim.ChooseVictims(candidates, resources{memory: need}.exact(), clock(t+1)) {
		if r := n.replica(v.UID); r != nil {
			ev.evict(r, false)
		}
	}
}

// control feeds reclaim.Decide what the controller would: the node, its
// offline pods with their jobs (terminating ones marked), and the usage
// source's view. Victims go through the Eviction API, with the stop
// notice unless online pods are short of memory; what a refused one holds
// is published again, as the controller does.
func (b *backfill) control(n *node, t int, ev evictor) {
	now := clock(t + 1)
	d := reclaim.Decide(b.node(n), b.usage(n, t), b.settings, now)
	noticed := d.Need.Memory == 0
	for _, p := range d.Evict {
		r := n.replica(p.UID)
		if r != nil && !ev.evict(r, noticed) {
			d.Published = d.Published.Add(p.Batch)
		}
	}
	if d.Published != n.published {
		n.publishedAt = now
	}
	n.published, n.cooldownUntil, n.online = d.Published, d.CooldownUntil, d.Online
}

func (b *backfill) node(n *node) reclaim.Node {
	b.pods = b.pods[:0]
	for _, r := range n.replicas {
		b.pods = append(b.pods, podOf(r))
	}
	for _, p := range n.terminating {
		b.pods = append(b.pods, reclaim.Pod{Namespace: "ml", Name: p.name, UID: p.uid, Batch: p.batch, Terminating: true})
	}
	return reclaim.Node{Name: n.name, Capacity: b.spec.capacity.exact(), Allocatable: b.spec.allocatable().exact(),
		Published: n.published, PublishedAt: n.publishedAt, CooldownUntil: n.cooldownUntil, Online: n.online, Pods: b.pods}
}

// podOf is a running replica as the decisions see it.
func podOf(r *replica) reclaim.Pod {
	return reclaim.Pod{Namespace: r.job.risk.Namespace, Name: r.name, UID: r.uid,
		Batch: r.job.batch, Started: clock(r.job.started), Job: &r.job.risk}
}

// usage is what the usage source reports at now, its newest sample lag
// minutes old: the peak of the online pods' use over the window up to
// that sample, the least over the CPU eviction delay, the system's use,
// whether the history covers the window yet, and the online pods' signal
// as of the same sample; nil before the first sample.
func (b *backfill) usage(n *node, t int) *reclaim.Usage {
	newest := b.source.newest(t)
	if newest < 0 {
		return nil
	}
	window := int(b.settings.Window / time.Minute)
	seen := b.source.seen
	return &reclaim.Usage{
		OnlinePeak:    seen.peak(n.index, newest, window).exact(),
		OnlineLasting: seen.least(n.index, newest, int(b.settings.CPUEvictionDelay/time.Minute)).exact(),
		System:        b.spec.system.exact(), SystemKnown: true,
		At: clock(newest + 1), Partial: newest+1 < window,
		Online: b.signal.read(n, newest),
	}
}

// minutes prints a duration of whole minutes as "15m".
func minutes(d time.Duration) string { return fmt.Sprintf("%dm", int(d/time.Minute)) }
