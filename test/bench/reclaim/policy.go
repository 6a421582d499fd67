package main

import (
	"math"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// policy decides where offline pods may go and protects online pods.
type policy interface {
	name() string
	// bestEffort: offline pods request no cpu or memory (only batch
	// resources), so they get the CPU online pods leave.
	bestEffort() bool
	// room is what the scheduler may still place on n.
	room(n *node) reclaim.Resources
	// cpuCap is the CPU offline pods on n may use in minute t.
	cpuCap(n *node, t int) float64
	// control decides n at the end of minute t: what it offers from now on,
	// and which replicas to evict.
	control(n *node, t int) []*replica
}

// priorityOnly is today's behaviour: offline pods request real cpu and
// memory at a lower priority, so they fit only into what online pods do
// not request, and nothing is evicted for usage.
type priorityOnly struct {
	spec   nodeSpec
	traces *traces
}

func (p *priorityOnly) name() string     { return "priority only" }
func (p *priorityOnly) bestEffort() bool { return false }

func (p *priorityOnly) room(n *node) reclaim.Resources {
	free := p.spec.allocatable().sub(p.traces.requests[n.index]).exact()
	return free.Sub(n.held).NonNegative()
}

func (p *priorityOnly) cpuCap(*node, int) float64     { return math.Inf(1) }
func (p *priorityOnly) control(*node, int) []*replica { return nil }
