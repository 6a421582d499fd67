package main

import (
	"testing"
)

func TestPDBAllows(t *testing.T) {
	cases := map[string]struct {
		maxUnavailable, unavailable int
		want                        bool
	}{
		"no budget":                   {maxUnavailable: -1, unavailable: 3, want: true},
		"maxUnavailable 0: never":     {maxUnavailable: 0, unavailable: 0, want: false},
		"maxUnavailable 1, none down": {maxUnavailable: 1, unavailable: 0, want: true},
		"maxUnavailable 1, one down":  {maxUnavailable: 1, unavailable: 1, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := pdbAllows(tc.maxUnavailable, tc.unavailable); got != tc.want {
				t.Errorf("allows %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBudgetOf(t *testing.T) {
	w := workload{pdbBlocking: 0.1, pdbOne: 0.2}
	for x, want := range map[float64]int{0: 0, 0.099: 0, 0.1: 1, 0.299: 1, 0.31: -1, 0.99: -1} {
		if got := budgetOf(x, w); got != want {
			t.Errorf("draw %.3f: maxUnavailable %d, want %d", x, got, want)
		}
	}
}

// TestAnEvictionWaitsForItsBudget: the Eviction API refuses a job whose
// budget allows no pod down (the job runs on, nothing lost); others stop,
// their pods running on for the notice and grace period; a kill asks no
// budget and frees at once.
func TestAnEvictionWaitsForItsBudget(t *testing.T) {
	c := newCluster(defaultNodeSpec(), 2)
	protected := gangOn(c, twoCPU, 1000, 0, 1)
	protected.maxUnavailable = 0
	free := gangOn(c, twoCPU, 1000, 0, 1)
	free.maxUnavailable = -1
	s := simulationOf(c, 10)
	s.real = realism{noticed: 2, unnoticed: 1}
	s.now = 4

	if s.evict(protected.replicas[0], true) {
		t.Fatal("the Eviction API evicted a pod whose budget allows none down")
	}
	if !protected.running() || s.tally.refused != 1 || s.tally.evictions != 0 {
		t.Errorf("running %v, refused %d, evictions %d: want the job running, one refusal", protected.running(), s.tally.refused, s.tally.evictions)
	}

	n := c.nodes[0]
	if !s.evict(free.replicas[0], true) || free.running() || s.tally.evictions != 1 {
		t.Fatalf("an eviction without a budget: running %v, evictions %d; want the job stopped", free.running(), s.tally.evictions)
	}
	if len(n.terminating) != 1 || n.releasing != free.batch || n.running() != protected.batch {
		t.Fatalf("node 0: %d terminating pods releasing %v, running %v; want the evicted replica terminating", len(n.terminating), n.releasing, n.running())
	}
	if !s.evict(free.replicas[1], true) {
		t.Error("evicting the second replica of a stopped job was refused; it is on its way out")
	}
	// Decided after minute 4, noticed: it runs on through minutes 5 and 6.
	for _, at := range []struct{ minute, terminating int }{{5, 1}, {6, 1}, {7, 0}} {
		c.nodes[0].release(at.minute)
		c.nodes[1].release(at.minute)
		if len(n.terminating) != at.terminating {
			t.Errorf("minute %d: %d terminating, want %d", at.minute, len(n.terminating), at.terminating)
		}
	}
	if n.held != protected.batch {
		t.Errorf("node 0 holds %v after the pod left, want only the protected replica's %v", n.held, protected.batch)
	}

	s.kill(protected.replicas[1])
	if protected.running() || len(c.nodes[1].terminating) != 0 || s.tally.evictions != 2 {
		t.Errorf("a kill: running %v, %d terminating, evictions %d; want the job stopped at once", protected.running(), len(c.nodes[1].terminating), s.tally.evictions)
	}
}

// TestBackfillRepublishesWhatARefusedPodHolds: as the controller does,
// the node never offers less than pods the Eviction API kept hold.
func TestBackfillRepublishesWhatARefusedPodHolds(t *testing.T) {
	spec := defaultNodeSpec()
	tr := flat(8, 30, 30)
	b := newBackfill(spec, tr, perfect(tr), benchSettings(), nil)
	c := newCluster(spec, 1)
	n := c.nodes[0]
	big := gangOn(c, resources{cpu: 20, memory: 8}, 1e6, 0)
	n.published = n.held
	for m := 5; m < 30; m++ {
		tr.cpu[0][m] = 16
	}
	ev := &recorder{refuse: true}
	b.control(n, 20, ev)
	if len(ev.evicted) != 1 || n.published != big.batch {
		t.Errorf("asked to evict %d, published %v; want one refused and its %v published again", len(ev.evicted), n.published, big.batch)
	}
}
