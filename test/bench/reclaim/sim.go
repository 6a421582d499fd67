package main

import (
	"math/rand/v2"
	"slices"
)

// realism is what the simulation models of a real cluster beyond the
// policies: what the jobs bring, and how long an evicted pod takes to go.
type realism struct {
	load workload
	// noticed and unnoticed are the whole minutes an evicted pod keeps
	// running and holding: its stop notice and grace period, or its grace
	// period alone (evictions for memory give no notice).
	noticed, unnoticed int
	// harm is online pods' latency beside offline pods.
	harm *harmModel
}

// simulation is one policy's run on the shared online traces and backlog.
type simulation struct {
	policy  policy
	spec    nodeSpec
	traces  *traces
	real    realism
	cluster *cluster
	backlog *backlog
	// rng draws the replicas' minute-to-minute use.
	rng   *rand.Rand
	tally *tally
	// minutes are this minute's nodes, reused from step to step.
	minutes []minute
	// now is the minute being simulated.
	now int
}

func newSimulation(p policy, spec nodeSpec, tr *traces, seed uint64, real realism) *simulation {
	nodes := len(tr.requests)
	return &simulation{
		policy: p, spec: spec, traces: tr, real: real,
		cluster: newCluster(spec, nodes),
		backlog: newBacklog(seed, real.load),
		rng:     rand.New(rand.NewPCG(seed, 2<<40)),
		tally:   newTally(p, spec, nodes, tr.minutes),
		minutes: make([]minute, nodes),
	}
}

// simulate runs every minute of the traces.
func (s *simulation) simulate() *tally {
	refill(s.cluster, s.backlog)
	for t := range s.traces.minutes {
		s.decide(t)
		schedule(s.cluster, s.policy.room, t, s.rng)
		refill(s.cluster, s.backlog)
	}
	return s.tally
}

// decide is one minute up to the scheduler: terminating pods that are
// gone leave, the nodes share their CPU and memory, jobs train and
// checkpoint, the node agents and the kernel free memory, and the policy
// decides each node.
func (s *simulation) decide(t int) {
	s.now = t
	for _, n := range s.cluster.nodes {
		n.release(t)
	}
	for _, j := range s.cluster.pending {
		if j.disrupted {
			s.tally.recovering += float64(len(j.replicas))
		}
	}
	s.observe(t)
	s.train(t)
	for _, n := range s.cluster.nodes {
		s.policy.protect(n, t, s)
	}
	s.killOutOfMemory()
	for _, n := range s.cluster.nodes {
		s.policy.control(n, t, s)
	}
}

// evict is the Eviction API: a PodDisruptionBudget may refuse; else the
// job stops, its pods running on for the notice and grace period.
func (s *simulation) evict(r *replica, noticed bool) bool {
	if r.node == nil { // its job already stopped: the pod is on its way out
		return true
	}
	if !pdbAllows(r.job.maxUnavailable, 0) {
		s.tally.refused++
		return false
	}
	s.tally.evictions++
	exit := s.real.unnoticed
	if noticed {
		exit = s.real.noticed
	}
	s.tally.lostToEvictions += s.stop(r.job, exit)
	return true
}

// kill stops r's job at once, asking no budget.
func (s *simulation) kill(r *replica) {
	if r.node == nil {
		return
	}
	s.tally.evictions++
	s.tally.lostToEvictions += s.stop(r.job, 0)
}

// observe is minute t on every node: demand, the CPU each side got, the
// online pods' latency (kept on the node for the online signal), and what
// the tally counts of it.
func (s *simulation) observe(t int) {
	for i, n := range s.cluster.nodes {
		m := minute{online: s.traces.at(i, t), offline: resources{memory: n.offlineMemory()}}
		for _, rep := range n.replicas {
			m.offline.cpu += rep.cpuDemand(s.rng)
		}
		for _, p := range n.terminating {
			m.offline.cpu += p.cpu
		}
		m = shareCPU(s.spec, m, s.policy.cpuCap(n, t), s.policy.bestEffort())
		m.protection = s.policy.protection(n, m.capped)
		m.inflation = m.latency(s.spec, s.real.harm)
		n.inflation[t%signalMemory] = m.inflation
		s.minutes[i] = m
	}
	s.tally.observe(t, s.minutes)
}

// train advances every running job by the minute at the pace of its
// slowest replica, grows its replicas' memory, and releases the finished
// ones.
func (s *simulation) train(t int) {
	s.cluster.running = slices.DeleteFunc(s.cluster.running, func(j *job) bool {
		speed := 1.0
		for _, rep := range j.replicas {
			speed = min(speed, s.minutes[rep.node.index].served())
			rep.grow(t)
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
// above online pods' score), the largest first, terminating ones too,
// until it fits. It asks no PodDisruptionBudget.
func (s *simulation) killOutOfMemory() {
	for i, n := range s.cluster.nodes {
		online := s.minutes[i].online.memory + s.spec.system.memory
		for online+n.offlineMemory() > s.spec.capacity.memory {
			r, k := largestMemory(n)
			if r == nil && k < 0 {
				break
			}
			s.tally.oomKills++
			if r != nil {
				s.tally.lostToOOM += s.stop(r.job, 0)
			} else {
				n.killTerminating(k)
			}
		}
	}
}

// largestMemory is the pod on n using the most memory: a running replica,
// or the index of a terminating pod (-1: none).
func largestMemory(n *node) (*replica, int) {
	var best *replica
	most, k := -1.0, -1
	for _, r := range n.replicas {
		if r.memoryUse > most {
			best, most = r, r.memoryUse
		}
	}
	for i, p := range n.terminating {
		if p.memory > most {
			best, most, k = nil, p.memory, i
		}
	}
	return best, k
}

// stop interrupts a job, its replicas evicted or killed, and puts it back
// among the pending ones; its pods stay on their nodes, using what they
// used, for exit more minutes. It returns the work lost.
func (s *simulation) stop(j *job, exit int) float64 {
	if exit > 0 {
		for _, r := range j.replicas {
			r.node.terminate(r, s.now+1+exit)
		}
	}
	lost := j.interrupt()
	s.cluster.requeue(j)
	return lost
}
