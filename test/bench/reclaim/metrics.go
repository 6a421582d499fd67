package main

import (
	"slices"
)

// tally is what one policy's run measured.
type tally struct {
	policy string
	spec   nodeSpec
	nodes  int
	// cpu and memory are the cluster's utilisation, minute by minute:
	// what pods used over what is allocatable. online is the CPU share
	// online pods alone used.
	cpu, memory, online []float64
	// Node-minutes in which online demand went unmet (CPU, memory,
	// either), and in which the node's CPU ran above the high watermark.
	cpuUnmet, memoryUnmet, unmet, hot int
	evictions, oomKills               int
	// Replica-minutes at full speed: work done, and lost back to the last
	// checkpoint to evictions and to OOM kills.
	work, lostToEvictions, lostToOOM float64
	// Replica-minutes of wall time: jobs running, and jobs waiting to run
	// again after a disruption.
	ran, recovering float64
	finished        int
}

func newTally(policy string, spec nodeSpec, nodes, minutes int) *tally {
	return &tally{policy: policy, spec: spec, nodes: nodes,
		cpu: make([]float64, minutes), memory: make([]float64, minutes), online: make([]float64, minutes)}
}

// observe counts minute t of every node.
func (s *tally) observe(t int, minutes []minute) {
	var cpu, memory, online float64
	for _, m := range minutes {
		cpu += m.onlineCPU + m.offlineCPU
		memory += min(m.online.memory+m.offline.memory, s.spec.allocatable().memory)
		online += m.onlineCPU
		cpuUnmet, memoryUnmet := m.cpuUnmet(), m.memoryUnmet(s.spec)
		s.cpuUnmet += count(cpuUnmet)
		s.memoryUnmet += count(memoryUnmet)
		s.unmet += count(cpuUnmet || memoryUnmet)
		s.hot += count(m.hot(s.spec))
	}
	alloc := s.spec.allocatable()
	n := float64(len(minutes))
	s.cpu[t], s.memory[t], s.online[t] = cpu/(n*alloc.cpu), memory/(n*alloc.memory), online/(n*alloc.cpu)
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}

// summary is a tally in the report's terms.
type summary struct {
	policy                            string
	cpuMean, cpuP50, memMean, memP50  float64 // percent
	onlineCPUMean                     float64 // percent
	unmet, cpuUnmet, memoryUnmet, hot float64 // percent of node-minutes
	unmetCount, hotCount              int
	evictionsPerNodeDay, oomKills     float64
	// work is what was done and kept; all in replica-hours.
	work, lostToEvictions, lostToOOM float64
	// recovery is the replica-hours jobs waited to run again after a
	// disruption; goodput the percent of the replica-time they ran or
	// recovered that became kept work (at full speed).
	recovery, goodput float64
	finished          int
}

func (s *tally) summary() summary {
	nodeMinutes := float64(s.nodes * len(s.cpu))
	pct := func(n int) float64 { return 100 * float64(n) / nodeMinutes }
	return summary{
		policy:  s.policy,
		cpuMean: 100 * mean(s.cpu), cpuP50: 100 * median(s.cpu),
		memMean: 100 * mean(s.memory), memP50: 100 * median(s.memory),
		onlineCPUMean: 100 * mean(s.online),
		unmet:         pct(s.unmet), cpuUnmet: pct(s.cpuUnmet), memoryUnmet: pct(s.memoryUnmet), hot: pct(s.hot),
		unmetCount: s.unmet, hotCount: s.hot,
		evictionsPerNodeDay: float64(s.evictions) / (nodeMinutes / minutesPerDay),
		oomKills:            float64(s.oomKills),
		work:                (s.work - s.lostToEvictions - s.lostToOOM) / 60, lostToEvictions: s.lostToEvictions / 60, lostToOOM: s.lostToOOM / 60,
		recovery: s.recovering / 60, goodput: 100 * (s.work - s.lostToEvictions - s.lostToOOM) / (s.ran + s.recovering),
		finished: s.finished,
	}
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// median is the nearest-rank 50th percentile.
func median(xs []float64) float64 {
	sorted := slices.Sorted(slices.Values(xs))
	return sorted[(len(sorted)+1)/2-1]
}

const minutesPerDay = 24 * 60
