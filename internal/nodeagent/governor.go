package nodeagent

import "fmt"

// Governor decides, tick by tick, the CPU ceiling of a node's offline pods
// on reclaimed capacity. The agent's Tick feeds it what it measured on its
// node; the reclaim frontier simulation (test/bench/reclaim) feeds it the
// use it simulates, so that both run the one decision rather than two
// copies of a formula.
//
// The ceiling is what online pods and the system leave below
// Settings.CPUThreshold of the node, never below Settings.CPUFloor; it
// shrinks at once and grows by at most Settings.CPUGrowth per tick. It
// applies (the governor is engaged) once online and system use reach
// Settings.CPUActivation, and is released only after that use has stayed
// below the activation less Settings.CPUActivationBand for
// Settings.CPUReleaseTicks ticks in a row: use that hovers at the
// activation keeps the ceiling rather than setting and lifting it every
// tick.
//
// A Governor reads no clock and no file, and is not safe for concurrent
// use.
type Governor struct {
	settings Settings
	capacity int64
	ceiling  int64
	engaged  bool
	// calm is how many ticks in a row use has been below the release mark
	// while engaged.
	calm int
}

// NewGovernor is a governor for a node of capacity milli-cores (its CPUs
// × 1000), released: offline pods run uncapped until the first Step says
// otherwise.
func NewGovernor(s Settings, capacity int64) (*Governor, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if capacity <= 0 {
		return nil, fmt.Errorf("a node of %d milli-cores: the capacity must be above 0", capacity)
	}
	return &Governor{settings: s, capacity: capacity, ceiling: -1}, nil
}

// Step takes what online pods and the system used over one tick, in
// milli-cores, and returns the offline pods' ceiling for the next, in
// milli-cores (-1: none, they run under the kernel's weights alone), and
// whether the ceiling applies.
func (g *Governor) Step(online, system int64) (ceiling int64, engaged bool) {
	u := usage{capacity: g.capacity, node: max(online, 0) + max(system, 0), kubepods: max(online, 0)}
	used := (u.online() + u.system()) * 100
	switch {
	case used >= g.capacity*int64(g.settings.CPUActivation):
		g.engaged, g.calm = true, 0
	case !g.engaged:
	case used < g.capacity*int64(g.settings.CPUActivation-g.settings.CPUActivationBand):
		g.calm++
		if g.calm >= g.settings.CPUReleaseTicks {
			g.engaged, g.calm = false, 0
		}
	default:
		g.calm = 0 // between the marks: the calm spell is broken
	}
	if !g.engaged {
		g.ceiling = -1
		return -1, false
	}
	g.ceiling = follow(g.ceiling, budget(u, g.settings), g.capacity, g.settings.CPUGrowth)
	return g.ceiling, true
}
