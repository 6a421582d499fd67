package main

import (
	"math"
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// backfill is backfill's reclaimed capacity: reclaim.Decide, every
// minute, for every node. The simulation is its usage source.
type backfill struct {
	spec     nodeSpec
	traces   *traces
	settings reclaim.Settings
	// pods is reused from node to node.
	pods []reclaim.Pod
}

func newBackfill(spec nodeSpec, tr *traces, s reclaim.Settings) *backfill {
	return &backfill{spec: spec, traces: tr, settings: s}
}

func (b *backfill) name() string     { return "backfill" }
func (b *backfill) bestEffort() bool { return true }

// room: kube-scheduler fits offline pods into the published batch
// capacity less what they hold there.
func (b *backfill) room(n *node) reclaim.Resources {
	return n.published.Sub(n.held).NonNegative()
}

// cpuCap: backfill has no node agent; BestEffort pods yield CPU by their
// shares alone.
func (b *backfill) cpuCap(*node, int) float64 { return math.Inf(1) }

// control feeds reclaim.Decide what the controller would: the node, its
// offline pods with their jobs, and the online peak over the window up
// to now. Evictions take effect at once, so no pod is ever terminating.
func (b *backfill) control(n *node, t int) []*replica {
	now := clock(t + 1)
	d := reclaim.Decide(b.node(n), b.usage(n, t, now), b.settings, now)
	if d.Published != n.published {
		n.publishedAt = now
	}
	n.published, n.cooldownUntil = d.Published, d.CooldownUntil
	victims := make([]*replica, 0, len(d.Evict))
	for _, p := range d.Evict {
		for _, r := range n.replicas {
			if r.uid == p.UID {
				victims = append(victims, r)
			}
		}
	}
	return victims
}

func (b *backfill) node(n *node) reclaim.Node {
	b.pods = b.pods[:0]
	for _, r := range n.replicas {
		b.pods = append(b.pods, reclaim.Pod{Namespace: r.job.risk.Namespace, Name: r.name, UID: r.uid,
			Batch: r.job.batch, Started: clock(r.job.started), Job: &r.job.risk})
	}
	return reclaim.Node{Name: n.name, Capacity: b.spec.capacity.exact(), Allocatable: b.spec.allocatable().exact(),
		Published: n.published, PublishedAt: n.publishedAt, CooldownUntil: n.cooldownUntil, Pods: b.pods}
}

// usage is what a usage source would report at now: the peak of the
// online pods' use over the window, the least over the CPU eviction
// delay, the system's use, and whether the history covers the window yet.
func (b *backfill) usage(n *node, t int, now time.Time) *reclaim.Usage {
	window := int(b.settings.Window / time.Minute)
	return &reclaim.Usage{
		OnlinePeak:    b.traces.peak(n.index, t, window).exact(),
		OnlineLasting: b.traces.least(n.index, t, int(b.settings.CPUEvictionDelay/time.Minute)).exact(),
		System:        b.spec.system.exact(), SystemKnown: true,
		At: now, Partial: t+1 < window,
	}
}
