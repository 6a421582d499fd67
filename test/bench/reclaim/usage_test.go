package main

import (
	"math"
	"testing"
)

func TestRateOf(t *testing.T) {
	cases := map[string]struct {
		xs     []float64
		window int
		want   []float64
	}{
		"a window of one is the series":   {xs: []float64{1, 5, 3}, window: 1, want: []float64{1, 5, 3}},
		"two minutes: the mean of a pair": {xs: []float64{2, 4, 8, 8}, window: 2, want: []float64{2, 3, 6, 8}},
		"shorter at the start":            {xs: []float64{3, 6, 9, 0}, window: 3, want: []float64{3, 4.5, 6, 5}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rateOf(tc.xs, tc.window)
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-9 {
					t.Fatalf("rate %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestDecisionsSeeABurstLate: a step of online CPU at minute 30 reaches
// backfill's decisions a minute later, half of it through a 2-minute
// rate, all of it a minute after that; memory a minute late, whole.
func TestDecisionsSeeABurstLate(t *testing.T) {
	spec := defaultNodeSpec()
	tr := flat(8, 30, 40)
	for m := 30; m < 40; m++ {
		tr.cpu[0][m], tr.memory[0][m] = 16, 40
	}
	b := newBackfill(spec, tr, newUsageSource(tr, 1, 2), benchSettings(), nil)
	n := newCluster(spec, 1).nodes[0]
	cases := []struct {
		decidedAfter int
		peak, memory float64
	}{
		{decidedAfter: 30, peak: 8, memory: 30},
		{decidedAfter: 31, peak: 12, memory: 40},
		{decidedAfter: 32, peak: 16, memory: 40},
	}
	for _, c := range cases {
		u := b.usage(n, c.decidedAfter)
		if want := (resources{cpu: c.peak, memory: c.memory}).exact(); u.OnlinePeak != want {
			t.Errorf("decided after minute %d: peak %v, want %v", c.decidedAfter, u.OnlinePeak, want)
		}
		if !u.At.Equal(clock(c.decidedAfter)) {
			t.Errorf("decided after minute %d: newest sample at %v, want a minute old (%v)", c.decidedAfter, u.At, clock(c.decidedAfter))
		}
	}
	if u := b.usage(n, 0); u != nil {
		t.Errorf("usage %+v after the first minute, want none yet (lag 1)", u)
	}
}

func TestKoordinatorAveragesTheDelayedUse(t *testing.T) {
	spec := defaultNodeSpec()
	tr := flat(8, 30, 20)
	for m := 10; m < 20; m++ {
		tr.cpu[0][m] = 18
	}
	k := newKoordinator(spec, tr, newUsageSource(tr, 1, 1), koordDefaults)
	// After minute 10 the newest sample is minute 9: no rise seen yet.
	before, seen := k.batch(0, 10), k.batch(0, 11)
	if fell := before.MilliCPU - seen.MilliCPU; fell < 1998 || fell > 2002 { // one minute of +10 CPU in a 5-minute average
		t.Errorf("batch cpu fell by %d milli-CPU when the first minute of +10 CPU arrived, want 2000", before.MilliCPU-seen.MilliCPU)
	}
}
