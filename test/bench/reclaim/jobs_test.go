package main

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// gangOn is a running job of one replica per node, each requesting
// request, with a checkpoint every 10 minutes, started at minute 0.
func gangOn(c *cluster, request resources, work float64, nodes ...int) *job {
	j := &job{name: "gang", request: request, work: work, checkpointEvery: 10, started: -1, savedAt: -1}
	j.batch = j.request.exact()
	j.risk.Replicas = len(nodes)
	for _, i := range nodes {
		name := fmt.Sprintf("r%d-%p", i, j)
		r := &replica{job: j, name: name, uid: name}
		j.replicas = append(j.replicas, r)
		c.nodes[i].bind(r)
	}
	j.start(-1, rand.New(rand.NewPCG(1, 1)))
	c.running = append(c.running, j)
	return j
}

// simulationOf runs nothing on its own: the test drives its steps.
func simulationOf(c *cluster, minutes int) *simulation {
	p := &priorityOnly{spec: c.spec}
	return &simulation{policy: p, spec: c.spec, cluster: c, tally: newTally(p, c.spec, len(c.nodes), minutes), minutes: make([]minute, len(c.nodes))}
}

var twoCPU = resources{cpu: 2, memory: 8}

func TestAGangProgressesOnlyWhileAllItsReplicasRun(t *testing.T) {
	c := newCluster(defaultNodeSpec(), 2)
	j := gangOn(c, twoCPU, 1000, 0, 1)
	s := simulationOf(c, 10)
	full := minute{offline: resources{cpu: 2}, offlineCPU: 2}
	starved := minute{offline: resources{cpu: 2}, offlineCPU: 0}

	s.minutes = []minute{full, full}
	s.train(0)
	if j.done != 2 {
		t.Fatalf("after a minute with both replicas running: done %.1f replica-minutes, want 2", j.done)
	}
	s.minutes = []minute{full, starved}
	s.train(1)
	if j.done != 2 {
		t.Errorf("a minute with one replica starved added %.1f replica-minutes, want none", j.done-2)
	}
	halved := minute{offline: resources{cpu: 2}, offlineCPU: 1}
	s.minutes = []minute{full, halved}
	s.train(2)
	if j.done != 3 {
		t.Errorf("a minute with one replica at half speed added %.1f replica-minutes, want 1 (the slowest's pace)", j.done-2)
	}
}

func TestAnInterruptedGangLosesTheWorkSinceItsCheckpoint(t *testing.T) {
	c := newCluster(defaultNodeSpec(), 2)
	j := gangOn(c, twoCPU, 1000, 0, 1)
	for m := range 14 {
		j.progress(m, 1)
	}
	// 14 minutes x 2 replicas; checkpointed after 10 minutes.
	if j.checkpointed != 20 || !j.risk.Since.Equal(clock(10)) {
		t.Fatalf("checkpointed %.0f since %v, want 20 since %v", j.checkpointed, j.risk.Since, clock(10))
	}
	s := simulationOf(c, 14)
	lost := s.stop(j, 0)
	if lost != 8 || j.done != 20 {
		t.Errorf("lost %.0f replica-minutes and resumes from %.0f, want 8 and 20", lost, j.done)
	}
	if j.running() || len(c.pending) != 1 || len(c.running) != 0 {
		t.Errorf("running %v, %d pending, %d running: want the job pending again", j.running(), len(c.pending), len(c.running))
	}
	for i, n := range c.nodes {
		if len(n.replicas) != 0 || !n.held.IsZero() {
			t.Errorf("node %d still holds %v: every replica of the gang must stop", i, n.held)
		}
	}
}

func TestAJobFinishesAndReleasesItsNodes(t *testing.T) {
	c := newCluster(defaultNodeSpec(), 1)
	gangOn(c, twoCPU, 3, 0)
	s := simulationOf(c, 5)
	s.minutes = []minute{{offline: resources{cpu: 2}, offlineCPU: 2}}
	for m := range 3 {
		s.train(m)
	}
	if s.tally.finished != 1 || s.tally.work != 3 || len(c.running) != 0 || !c.nodes[0].held.IsZero() {
		t.Errorf("finished %d, work %.0f, %d running, node holds %v; want 1, 3, 0, nothing", s.tally.finished, s.tally.work, len(c.running), c.nodes[0].held)
	}
}

func TestTheBacklogIsTheSameForEveryPolicy(t *testing.T) {
	a, b := newBacklog(7, workload{}), newBacklog(7, workload{})
	for range 500 {
		x, y := a.job(), b.job()
		if x.name != y.name || x.request != y.request || x.work != y.work || len(x.replicas) != len(y.replicas) || x.checkpointEvery != y.checkpointEvery {
			t.Fatalf("job %s differs between two backlogs of one seed", x.name)
		}
		if n := len(x.replicas); n < 1 || n > gangMax {
			t.Errorf("%s: %d replicas, want 1-8", x.name, n)
		}
		if x.request.cpu < 1 || x.request.cpu > 8 || x.request.memory < 2 || x.request.memory > 32 {
			t.Errorf("%s: replicas request %+v, want 1-8 CPU and 2-32 GiB", x.name, x.request)
		}
		if x.checkpointEvery < 5 || x.checkpointEvery > 15 {
			t.Errorf("%s: checkpoints every %d minutes, want 5-15", x.name, x.checkpointEvery)
		}
	}
}

// TestTheOOMKillerTakesTheLargestTerminatingPodsToo: a terminating pod
// using the most memory goes first, at no more work lost.
func TestTheOOMKillerTakesTheLargestTerminatingPodsToo(t *testing.T) {
	c := newCluster(defaultNodeSpec(), 1)
	n := c.nodes[0]
	small := gangOn(c, resources{cpu: 2, memory: 20}, 1000, 0)
	big := gangOn(c, resources{cpu: 2, memory: 60}, 1000, 0)
	small.replicas[0].memoryUse, big.replicas[0].memoryUse = 20, 60
	s := simulationOf(c, 10)
	s.stop(big, 3)
	// 50 online + 0.9 system + 20 + 60 terminating: 130.9 GiB of 128.
	s.minutes = []minute{{online: resources{memory: 50}}}
	s.killOutOfMemory()
	if s.tally.oomKills != 1 || len(n.terminating) != 0 || !small.running() || s.tally.lostToOOM != 0 {
		t.Errorf("%d kills, %d terminating, small running %v, %.0f lost: want the terminating pod killed alone",
			s.tally.oomKills, len(n.terminating), small.running(), s.tally.lostToOOM)
	}
}
