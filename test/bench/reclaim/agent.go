package main

import (
	"math"

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

// ceiling is the CPU offline pods may use together in a minute:
// capacity x threshold - online - system, never below the floor, once
// online pods and the system use the activation share of the node; none
// (+Inf) below it, where offline pods run under the kernel's weights.
func (a agentSettings) ceiling(capacity, online, system float64) float64 {
	if (online+system)*100 < capacity*float64(a.cpuActivation) {
		return math.Inf(1)
	}
	return max(capacity*float64(a.cpuThreshold)/100-online-system, capacity*float64(a.cpuFloor)/100)
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
