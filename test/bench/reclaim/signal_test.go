package main

import (
	"math"
	"testing"
)

func TestTheSignalIsTheP99OverItsWindowAsOfTheNewestSample(t *testing.T) {
	n := &node{}
	for m, x := range []float64{1, 1, 2, 4, 9} {
		n.inflation[m%signalMemory] = x
	}
	s := signalSettings{objective: 2, window: 2}
	sig := s.read(n, 3) // minutes 2 and 3: a mean of 3x; minute 4 is not out yet
	if sig == nil || !sig.SlackKnown || math.Abs(sig.Slack-(2-3)/2.0) > 1e-9 {
		t.Fatalf("signal %+v, want slack -0.5 (3x against 2x)", sig)
	}
	if sig.P99 != 3*onlineAlone || sig.Objective != 2*onlineAlone || sig.WaitKnown {
		t.Errorf("P99 %s against %s (wait known %v), want %s against %s, no CPU wait", sig.P99, sig.Objective, sig.WaitKnown, 3*onlineAlone, 2*onlineAlone)
	}
	if got := s.read(n, 0); got.P99 != onlineAlone {
		t.Errorf("at the first minute P99 %s, want the one minute there is", got.P99)
	}
	if s.read(n, -1) != nil || (signalSettings{window: 2}).read(n, 3) != nil {
		t.Error("a signal before any sample, or without an objective")
	}
}

// TestBackfillListensToOnlineLatency: a node whose online pods stay above
// their objective stops growing at once and, after the evict-after time,
// gives a step of CPU back by evicting; without an objective it does
// neither.
func TestBackfillListensToOnlineLatency(t *testing.T) {
	spec := defaultNodeSpec()
	for _, objective := range []float64{1.5, 0} {
		tr := flat(8, 30, 40)
		b := newBackfill(spec, tr, perfect(tr), benchSettings(), nil)
		b.signal = signalSettings{objective: objective, window: 2}
		c := newCluster(spec, 1)
		n := c.nodes[0]
		gangOn(c, resources{cpu: 4, memory: 8}, 1e6, 0)
		gangOn(c, resources{cpu: 4, memory: 8}, 1e6, 0)
		n.published = n.held
		for m := range n.inflation {
			n.inflation[m] = 3 // far above 1.5x
		}
		ev := &recorder{}
		for m := 20; m < 24; m++ {
			b.control(n, m, ev)
			if objective > 0 && n.online == nil {
				t.Fatalf("minute %d: no hold at 3x against an objective of 1.5x", m)
			}
		}
		switch {
		case objective == 0 && (n.online != nil || len(ev.evicted) > 0):
			t.Errorf("no objective: hold %+v, evicted %d", n.online, len(ev.evicted))
		case objective == 0:
		case len(ev.evicted) != 1 || !ev.noticed[0]:
			t.Errorf("evicted %d (noticed %v) after 4 harmful minutes, want one step, one pod with notice", len(ev.evicted), ev.noticed)
		case n.online.Steps != 1 || !n.online.Since.Equal(clock(21)):
			t.Errorf("hold %+v, want one step, harmful since the first decision", n.online)
		}
	}
}
