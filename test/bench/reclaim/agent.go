package main

import (
	"github.com/backfill-dev/backfill/internal/nodeagent"
)

// agentSettings are backfill's node agent (`backfill node-agent`,
// internal/nodeagent) as the simulation models it, in percent of the
// node. It loops every second on its node's cgroups, so in the model it
// sees the minute itself.
type agentSettings struct {
	cpuThreshold, cpuActivation, cpuFloor, memoryThreshold int
}

// shippedAgent are the agent's defaults.
func shippedAgent() agentSettings {
	s := nodeagent.DefaultSettings()
	return agentSettings{cpuThreshold: s.CPUThreshold, cpuActivation: s.CPUActivation, cpuFloor: s.CPUFloor, memoryThreshold: s.MemoryThreshold}
}

// settings are the agent's own settings: its defaults, with the knobs the
// simulation sets.
func (a agentSettings) settings() nodeagent.Settings {
	s := nodeagent.DefaultSettings()
	s.CPUThreshold, s.CPUActivation, s.CPUFloor, s.MemoryThreshold = a.cpuThreshold, a.cpuActivation, a.cpuFloor, a.memoryThreshold
	return s
}

// memoryNeed is the memory the agent frees by evicting offline pods: none
// below the threshold of the node's memory in use; above it, enough to
// bring use 2 points below, less what terminating pods release anyway.
func (a agentSettings) memoryNeed(capacity, used, releasing float64) float64 {
	if a.memoryThreshold == 0 || used*100 < capacity*float64(a.memoryThreshold) {
		return 0
	}
	return max(0, used-capacity*float64(a.memoryThreshold-2)/100-releasing)
}
