package main

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// pendingJob is a pending job of replicas replicas of cpu CPU and 4 GiB.
func pendingJob(id, replicas int, cpu float64) *job {
	j := &job{id: id, name: "j", request: resources{cpu: cpu, memory: 4}, started: -1, savedAt: -1, work: 100}
	j.batch = j.request.exact()
	for range replicas {
		j.replicas = append(j.replicas, &replica{job: j})
	}
	return j
}

func TestScheduleBindsAGangWholeOrNotAtAll(t *testing.T) {
	c := newCluster(defaultNodeSpec(), 2)
	gang, single := pendingJob(0, 3, 4), pendingJob(1, 1, 4)
	c.pending = []*job{gang, single}
	rooms := map[*node]reclaim.Resources{
		c.nodes[0]: resources{cpu: 5, memory: 64}.exact(),
		c.nodes[1]: resources{cpu: 4, memory: 64}.exact(),
	}
	schedule(c, func(n *node) reclaim.Resources { return rooms[n] }, 0, rand.New(rand.NewPCG(1, 1)))

	if gang.running() || gang.replicas[0].node != nil {
		t.Errorf("the gang of 3 x 4 CPU started in room for 2 replicas")
	}
	if !single.running() || single.replicas[0].node != c.nodes[0] {
		t.Errorf("the single job did not pass the gang that waits, first fit")
	}
	if len(c.pending) != 1 || c.pending[0] != gang {
		t.Errorf("pending %d jobs, want the gang alone", len(c.pending))
	}
}

// TestSchedulerNeverOverfills runs every policy on a small cluster and
// checks, every minute, that what the scheduler placed fits what the
// policy offered, and each policy's own bound.
func TestSchedulerNeverOverfills(t *testing.T) {
	spec := defaultNodeSpec()
	const nodes, minutes = 8, 12 * 60
	tr := newTraces(spec, nodes, minutes, 3, profiles[2])
	src := newUsageSource(tr, 1, 2)
	agent := shippedAgent()
	listening := newBackfill(spec, tr, src, benchSettings(), &agent)
	listening.signal = signalSettings{objective: 1.5, window: 2}
	policies := []policy{&priorityOnly{spec: spec, traces: tr}, newKoordinator(spec, tr, src, koordKnobs{85, 90}),
		newBackfill(spec, tr, src, benchSettings(), nil), newBackfill(spec, tr, src, benchSettings(), &agent), listening}
	real := realism{load: workload{pdbBlocking: 0.1, pdbOne: 0.1, growing: 0.2}, noticed: 2, unnoticed: 1, harm: fixtureHarm(t)}
	for i, p := range policies {
		t.Run(fmt.Sprintf("%d %s", i, p.name()), func(t *testing.T) {
			s := newSimulation(p, spec, tr, 3, real)
			refill(s.cluster, s.backlog)
			placed := 0
			for m := range minutes {
				s.decide(m)
				before, offered := map[*node]reclaim.Resources{}, map[*node]reclaim.Resources{}
				for _, n := range s.cluster.nodes {
					before[n], offered[n] = n.held, p.room(n)
				}
				schedule(s.cluster, p.room, m, s.rng)
				for _, n := range s.cluster.nodes {
					added := n.held.Sub(before[n])
					placed += int(added.MilliCPU)
					if !offered[n].Covers(added) {
						t.Fatalf("minute %d, %s: placed %v into room for %v", m, n.name, added, offered[n])
					}
					checkBound(t, p, n, tr, spec, m)
				}
				refill(s.cluster, s.backlog)
			}
			if placed == 0 {
				t.Error("nothing was ever placed")
			}
		})
	}
}

// checkBound is each policy's own limit on what offline pods hold.
func checkBound(t *testing.T, p policy, n *node, tr *traces, spec nodeSpec, m int) {
	t.Helper()
	switch p.(type) {
	case *priorityOnly:
		if free := spec.allocatable().sub(tr.requests[n.index]).exact(); !free.Covers(n.held) {
			t.Fatalf("minute %d, %s: offline pods request %v beyond the unrequested %v", m, n.name, n.held, free)
		}
	case *backfill:
		if !n.published.Covers(n.running()) {
			t.Fatalf("minute %d, %s: offline pods hold %v beyond the published %v", m, n.name, n.running(), n.published)
		}
	}
}
