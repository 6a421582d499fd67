package main

import (
	"fmt"
	"math"

	"github.com/backfill-dev/backfill/internal/nodeagent"
)

// ticksPerMinute are the agent's 1 s ticks in one simulated minute.
const ticksPerMinute = 60

// nodeGovernor is the node agent's CPU ceiling on one node, decided by
// the agent's own code (nodeagent.Governor) tick by tick, its state
// carried from minute to minute.
type nodeGovernor struct {
	g *nodeagent.Governor
}

// newNodeGovernor is the agent's governor for a node of capacity cores.
// The flags and the sweep are checked before a run, so settings it
// refuses are a bug of the bench.
func newNodeGovernor(a agentSettings, capacity float64) *nodeGovernor {
	g, err := nodeagent.NewGovernor(a.settings(), int64(math.Round(capacity*1000)))
	if err != nil {
		panic(fmt.Sprintf("the node agent refuses the simulated settings %+v: %v", a, err))
	}
	return &nodeGovernor{g: g}
}

// minute is the ceiling over offline pods at the end of a minute (cores,
// +Inf: none) and whether it is engaged: a minute of the agent's ticks,
// each at the minute's online and system use (use does not move within a
// simulated minute; the agent's state, its release count included, does).
func (n *nodeGovernor) minute(online, system float64) (float64, bool) {
	on, sys := int64(math.Ceil(online*1000)), int64(math.Ceil(system*1000))
	var ceiling int64
	var engaged bool
	for range ticksPerMinute {
		ceiling, engaged = n.g.Step(on, sys)
	}
	if ceiling < 0 {
		return math.Inf(1), engaged
	}
	return float64(ceiling) / 1000, engaged
}
