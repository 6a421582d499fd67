package main

import (
	"math"
	"testing"
)

// TestInflationReproducesTheBench: at each calibration point the model
// gives the ratio bench-interference measured.
func TestInflationReproducesTheBench(t *testing.T) {
	for p, points := range calibration {
		for _, c := range points {
			if got := inflation(p, c.online, c.fill, 1); math.Abs(got-c.inflation) > 1e-9 {
				t.Errorf("%s, %s: inflation %.3f, want the measured %.2f", p, c.scenario, got, c.inflation)
			}
		}
	}
}

func TestInflation(t *testing.T) {
	cases := map[string]struct {
		p                     protection
		online, fill, starved float64
		wantMin, wantMax      float64
	}{
		"no offline work: none":                        {p: byWeights, online: 0.3, fill: 0, starved: 1, wantMin: 1, wantMax: 1},
		"steady, weights, full: the steady point":      {p: byWeights, online: 0.20, fill: 1, starved: 1, wantMin: 1.19, wantMax: 1.19},
		"below the steady share: as steady":            {p: byWeights, online: 0.05, fill: 1, starved: 1, wantMin: 1.19, wantMax: 1.19},
		"half way in log: geometric mean of slopes":    {p: byWeights, online: 0.335, fill: 1, starved: 1, wantMin: 1 + math.Sqrt(0.19*15/0.88) - 1e-9, wantMax: 1 + math.Sqrt(0.19*15/0.88) + 1e-9},
		"above the burst share: as the burst":          {p: byWeights, online: 0.9, fill: 0.88, starved: 1, wantMin: 16, wantMax: 16},
		"fill above 1 counts as 1":                     {p: byWeights, online: 0.20, fill: 1.7, starved: 1, wantMin: 1.19, wantMax: 1.19},
		"a ceiling costs about the same light or busy": {p: byCeiling, online: 0.3, fill: 0.5, starved: 1, wantMin: 1.64, wantMax: 1.66},
		"starved online pods wait at least demand/got": {p: byCeiling, online: 0.3, fill: 0.1, starved: 3, wantMin: 3, wantMax: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := inflation(tc.p, tc.online, tc.fill, tc.starved)
			if got < tc.wantMin-1e-9 || got > tc.wantMax+1e-9 {
				t.Errorf("inflation %.4f, want %.4f-%.4f", got, tc.wantMin, tc.wantMax)
			}
		})
	}
}

func TestInflationGrowsWithFillAndOnlineLoadUnderWeights(t *testing.T) {
	prev := 0.0
	for _, online := range []float64{0.1, 0.2, 0.3, 0.4, 0.47} {
		x := inflation(byWeights, online, 1, 1)
		if x < prev {
			t.Errorf("online share %.2f: inflation %.2f fell from %.2f", online, x, prev)
		}
		prev = x
	}
	if inflation(byWeights, 0.4, 0.5, 1) >= inflation(byWeights, 0.4, 0.9, 1) {
		t.Error("less offline CPU beside online work inflated latency as much")
	}
}

func TestAMinuteUnderACeilingThatBindsUsesTheCeilingCurve(t *testing.T) {
	spec := defaultNodeSpec() // 32 CPU, system 0.4
	m := minute{online: resources{cpu: 12}, offline: resources{cpu: 19}}
	free := shareCPU(spec, m, math.Inf(1), true)
	capped := shareCPU(spec, m, 10, true)
	if free.capped || !capped.capped {
		t.Fatalf("capped %v without a ceiling and %v under one below demand", free.capped, capped.capped)
	}
	// 12 of 32 CPU online: 0.375; fill 10 / (32 - 12 - 0.4).
	want := inflation(byCeiling, 0.375, 10/19.6, 1)
	if got := capped.latency(spec); math.Abs(got-want) > 1e-9 {
		t.Errorf("latency %.3f, want %.3f", got, want)
	}
	if free.latency(spec) <= capped.latency(spec) {
		t.Errorf("offline uncapped at full fill (%.2fx) hurt online less than capped (%.2fx) at 37.5%% online", free.latency(spec), capped.latency(spec))
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	for range 98 {
		h.add(1.0, 1)
	}
	h.add(2.5, 1)
	h.add(100, 1) // beyond the top bin
	h.add(7, 0)   // no weight: not counted
	if got := h.quantile(0.5); got != 1 {
		t.Errorf("median %.2f, want 1", got)
	}
	if got := h.quantile(0.99); math.Abs(got-2.5) > 1e-9 {
		t.Errorf("p99 %.2f, want 2.50", got)
	}
	if got := h.quantile(1); got < 40 {
		t.Errorf("max %.2f, want the top bin", got)
	}
	if got, want := h.mean(), (98+2.5+100)/100.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("mean %.4f, want %.4f (exact)", got, want)
	}
}
