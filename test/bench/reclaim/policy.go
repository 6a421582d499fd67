package main

import (
	"math"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// policy decides where offline pods may go and protects online pods.
type policy interface {
	// name is the policy's family, knobs its settings in this run.
	name() string
	knobs() string
	// bestEffort: offline pods request no cpu or memory (only batch
	// resources), so they get the CPU online pods leave.
	bestEffort() bool
	// room is what the scheduler may still place on n.
	room(n *node) reclaim.Resources
	// cpuCap is the CPU offline pods on n may use in minute t (+Inf: no
	// ceiling).
	cpuCap(n *node, t int) float64
	// protection is how offline pods on n were kept off online CPU in the
	// minute, capped when their ceiling held them below their demand.
	protection(n *node, capped bool) protection
	// protect is the node agent's memory loop on n at the end of minute t:
	// it sees the minute's use.
	protect(n *node, t int, ev evictor)
	// control is the cluster-level decision for n at the end of minute t:
	// what it offers from now on, and which replicas to evict.
	control(n *node, t int, ev evictor)
}

// evictor stops replicas for a policy.
type evictor interface {
	// evict asks the Eviction API to evict r, after a stop notice when
	// noticed; false: a PodDisruptionBudget refused, r keeps running.
	evict(r *replica, noticed bool) bool
	// kill stops r at once; nothing refuses it.
	kill(r *replica)
}

// priorityOnly is today's behaviour: offline pods request real cpu and
// memory at a lower priority, so they fit only into what online pods do
// not request, and nothing is evicted for usage.
type priorityOnly struct {
	spec   nodeSpec
	traces *traces
}

func (p *priorityOnly) name() string     { return "priority only" }
func (p *priorityOnly) knobs() string    { return "-" }
func (p *priorityOnly) bestEffort() bool { return false }

func (p *priorityOnly) room(n *node) reclaim.Resources {
	free := p.spec.allocatable().sub(p.traces.requests[n.index]).exact()
	return free.Sub(n.held).NonNegative()
}

func (p *priorityOnly) cpuCap(*node, int) float64         { return math.Inf(1) }
func (p *priorityOnly) protection(*node, bool) protection { return byWeights }
func (p *priorityOnly) protect(*node, int, evictor)       {}
func (p *priorityOnly) control(*node, int, evictor)       {}
