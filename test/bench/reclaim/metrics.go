package main

import (
	"slices"
)

// tally is what one policy's run measured.
type tally struct {
	policy, knobs string
	spec          nodeSpec
	nodes         int
	// cpu and memory are the cluster's utilisation, minute by minute:
	// what pods used over what is allocatable. online is the CPU share
	// online pods alone used.
	cpu, memory, online []float64
	// Node-minutes in which online demand went unmet (CPU or memory: the
	// kernel cannot take offline memory back in time), and in which the
	// node's CPU ran above each of hotLines.
	unmet int
	hot   [len(hotLines)]int
	// latency is online pods' P99 inflation, weighted by the CPU they used
	// (a proxy for their requests); slow counts the node-minutes above
	// each of slowLines.
	latency histogram
	slow    [len(slowLines)]int
	// evictions are the pods a policy stopped (evicted or killed),
	// refused the evictions a PodDisruptionBudget refused.
	evictions, refused, oomKills int
	// Replica-minutes at full speed: work done, and lost back to the last
	// checkpoint to evictions and to OOM kills.
	work, lostToEvictions, lostToOOM float64
	// Replica-minutes of wall time: jobs running, and jobs waiting to run
	// again after a disruption.
	ran, recovering float64
	finished        int
}

// slowLines are the online P99 inflations above which the report counts
// slow node-minutes: bench-interference's target (1.1x), far from it
// (1.5x) and a service in trouble (3x).
var slowLines = [...]float64{1.1, 1.5, 3}

func newTally(p policy, spec nodeSpec, nodes, minutes int) *tally {
	return &tally{policy: p.name(), knobs: p.knobs(), spec: spec, nodes: nodes,
		cpu: make([]float64, minutes), memory: make([]float64, minutes), online: make([]float64, minutes)}
}

// observe counts minute t of every node.
func (s *tally) observe(t int, minutes []minute) {
	var cpu, memory, online float64
	for _, m := range minutes {
		cpu += m.onlineCPU + m.offlineCPU
		memory += min(m.online.memory+m.offline.memory, s.spec.allocatable().memory)
		online += m.onlineCPU
		s.unmet += count(m.cpuUnmet() || m.memoryUnmet(s.spec))
		busy := m.busy(s.spec)
		for i, line := range hotLines {
			s.hot[i] += count(busy > line)
		}
		s.latency.add(m.inflation, m.onlineCPU)
		for i, line := range slowLines {
			s.slow[i] += count(m.inflation > line)
		}
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
	policy, knobs                    string
	cpuMean, cpuP50, memMean, memP50 float64 // percent
	onlineCPUMean                    float64 // percent
	// hot are node-minutes above each of hotLines; unmet those in which
	// online demand went unmet (CPU or memory).
	hot   [len(hotLines)]float64
	unmet float64
	// slow are the node-minutes with online P99 inflation above each of
	// slowLines; latencyMean and latencyP99 its mean and 99th percentile,
	// weighted by online CPU.
	slow                         [len(slowLines)]float64
	latencyMean, latencyP99      float64
	evictions, refused, oomKills float64
	// work is what was done and kept, lost what evictions and OOM kills
	// cost; all in replica-hours.
	work, lost, lostToEvictions, lostToOOM float64
	// recovery is the replica-hours jobs waited to run again after a
	// disruption; goodput the percent of the replica-time they ran or
	// recovered that became kept work (at full speed).
	recovery, goodput float64
	finished          float64
}

func (s *tally) summary() summary {
	kept := s.work - s.lostToEvictions - s.lostToOOM
	sum := summary{
		policy: s.policy, knobs: s.knobs,
		cpuMean: 100 * mean(s.cpu), cpuP50: 100 * median(s.cpu),
		memMean: 100 * mean(s.memory), memP50: 100 * median(s.memory),
		onlineCPUMean: 100 * mean(s.online),
		unmet:         float64(s.unmet),
		latencyMean:   s.latency.mean(), latencyP99: s.latency.quantile(0.99),
		evictions: float64(s.evictions), refused: float64(s.refused), oomKills: float64(s.oomKills),
		work: kept / 60, lost: (s.lostToEvictions + s.lostToOOM) / 60,
		lostToEvictions: s.lostToEvictions / 60, lostToOOM: s.lostToOOM / 60,
		recovery: s.recovering / 60, goodput: 100 * kept / (s.ran + s.recovering),
		finished: float64(s.finished),
	}
	for i, h := range s.hot {
		sum.hot[i] = float64(h)
	}
	for i, n := range s.slow {
		sum.slow[i] = float64(n)
	}
	return sum
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
