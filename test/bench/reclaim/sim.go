package main

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// simulation is one policy's run on the shared online traces and backlog.
type simulation struct {
	policy  policy
	spec    nodeSpec
	traces  *traces
	cluster *cluster
	backlog *backlog
	// rng draws the replicas' minute-to-minute use.
	rng   *rand.Rand
	tally *tally
	// minutes are this minute's nodes, reused from step to step.
	minutes []minute
}

func newSimulation(p policy, spec nodeSpec, tr *traces, seed uint64) *simulation {
	nodes := len(tr.requests)
	return &simulation{
		policy: p, spec: spec, traces: tr,
		cluster: newCluster(spec, nodes),
		backlog: newBacklog(seed),
		rng:     rand.New(rand.NewPCG(seed, 2<<40)),
		tally:   newTally(p.name(), spec, nodes, tr.minutes),
		minutes: make([]minute, nodes),
	}
}

// simulate runs every minute of the traces.
func (s *simulation) simulate() *tally {
	refill(s.cluster, s.backlog)
	for t := range s.traces.minutes {
		s.step(t)
	}
	return s.tally
}

// step is one minute: the nodes share their CPU and memory, jobs train
// and checkpoint, the kernel kills what memory cannot hold, the policy
// decides each node, and the scheduler starts what fits.
func (s *simulation) step(t int) {
	for _, j := range s.cluster.pending {
		if j.disrupted {
			s.tally.recovering += float64(len(j.replicas))
		}
	}
	s.observe(t)
	s.train(t)
	s.killOutOfMemory()
	s.control(t)
	schedule(s.cluster, s.policy.room, t, s.rng)
	refill(s.cluster, s.backlog)
}

// control is the policy's decision for every node at the end of minute
// t; its evictions take effect at once.
func (s *simulation) control(t int) {
	for _, n := range s.cluster.nodes {
		for _, v := range s.policy.control(n, t) {
			s.tally.evictions++
			if v.node != nil { // else its job already stopped
				s.tally.lostToEvictions += s.stop(v.job)
			}
		}
	}
}

// observe is minute t on every node: demand, the CPU each side got, and
// what the tally counts of it.
func (s *simulation) observe(t int) {
	for i, n := range s.cluster.nodes {
		m := minute{online: s.traces.at(i, t), offline: resources{memory: n.offlineMemory()}}
		for _, rep := range n.replicas {
			m.offline.cpu += rep.cpuDemand(s.rng)
		}
		s.minutes[i] = shareCPU(s.spec, m, s.policy.cpuCap(n, t), s.policy.bestEffort())
	}
	s.tally.observe(t, s.minutes)
}

// train advances every running job by the minute at the pace of its
// slowest replica, and releases the finished ones.
func (s *simulation) train(t int) {
	s.cluster.running = slices.DeleteFunc(s.cluster.running, func(j *job) bool {
		speed := 1.0
		for _, rep := range j.replicas {
			speed = min(speed, s.minutes[rep.node.index].served())
		}
		gained, finished := j.progress(t, speed)
		s.tally.work += gained
		s.tally.ran += float64(len(j.replicas))
		if !finished {
			return false
		}
		s.tally.finished++
		for _, rep := range j.replicas {
			rep.node.remove(rep)
			rep.node = nil
		}
		return true
	})
}

// killOutOfMemory is the kernel's OOM killer on a node whose memory is
// overcommitted: offline pods go first (BestEffort, or Burstable far
// above online pods' score), the largest first, until it fits.
func (s *simulation) killOutOfMemory() {
	for i, n := range s.cluster.nodes {
		online := s.minutes[i].online.memory + s.spec.system.memory
		for len(n.replicas) > 0 && online+n.offlineMemory() > s.spec.capacity.memory {
			largest := slices.MaxFunc(n.replicas, func(a, b *replica) int { return cmp.Compare(a.memoryUse, b.memoryUse) })
			s.tally.oomKills++
			s.tally.lostToOOM += s.stop(largest.job)
		}
	}
}

// stop interrupts a job, its replicas evicted or killed, and puts it back
// among the pending ones; it returns the work lost.
func (s *simulation) stop(j *job) float64 {
	lost := j.interrupt()
	s.cluster.requeue(j)
	return lost
}
