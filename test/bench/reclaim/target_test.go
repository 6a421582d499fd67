package main

import (
	"strings"
	"testing"
)

// pointOf is a variant's point over seeds, each run given as CPU %,
// node-minutes above 90% and work lost; other harms equal.
func pointOf(family, knobs string, runs ...[3]float64) point {
	pt := point{variant: variant{family: family, knobs: knobs}}
	for i, r := range runs {
		pt.seeds = append(pt.seeds, uint64(i+1))
		pt.runs = append(pt.runs, summary{cpuMean: r[0], hot: [3]float64{0, 0, r[1]}, lost: r[2], latencyMean: 1.2, latencyP99: 2})
	}
	pt.mean, pt.lo, pt.hi = spread(pt.runs)
	return pt
}

func TestJudge(t *testing.T) {
	tuned := pointOf(familyKoordinator, "85/90", [3]float64{74, 0, 100}, [3]float64{73.5, 0, 90})
	shipped := pointOf(familyKoordinator, "60/65", [3]float64{52, 0, 10}, [3]float64{52, 0, 12})
	cases := map[string]struct {
		agents     []point
		met, below bool
		miss       string
	}{
		"beyond tuned Koordinator on every seed": {
			agents: []point{pointOf(familyAgent, "m10", [3]float64{74, 0, 20}, [3]float64{74, 0, 30})}, met: true,
		},
		"hotter on one seed": {
			agents: []point{pointOf(familyAgent, "m10", [3]float64{74, 0, 20}, [3]float64{74, 5, 30})}, miss: "min >90%",
		},
		"the shipped Koordinator is no rival: below 73%": {
			agents: []point{pointOf(familyAgent, "m10", [3]float64{74, 0, 50}, [3]float64{74, 0, 60})}, met: true,
		},
		"the best of several": {
			agents: []point{
				pointOf(familyAgent, "m5", [3]float64{76, 9, 5}, [3]float64{76, 9, 5}),
				pointOf(familyAgent, "m10", [3]float64{74, 0, 5}, [3]float64{74, 0, 5}),
			}, met: true,
		},
		"below 73% on a seed": {
			agents: []point{pointOf(familyAgent, "m20", [3]float64{74, 0, 5}, [3]float64{72.9, 0, 5})}, below: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := judge("harsh", tc.agents, []point{shipped, tuned})
			if v.met() != tc.met || v.below != tc.below {
				t.Fatalf("met %v, below %v, misses %q; want %v, %v", v.met(), v.below, v.misses, tc.met, tc.below)
			}
			if tc.miss != "" && (len(v.misses) != 1 || !strings.Contains(v.misses[0], tc.miss) || !strings.Contains(v.misses[0], "[2]")) {
				t.Errorf("misses %q, want one on %s on seed 2", v.misses, tc.miss)
			}
			if tc.met && v.best.variant.knobs != "m10" {
				t.Errorf("best %s, want m10", v.best.variant.knobs)
			}
		})
	}
}

func TestTheSweeps(t *testing.T) {
	// 18 and 36, and the agent's thresholds below 85 with its activation
	// and always on: 2 x 2 at the base margin, 3 x 2 x 2 at 5 and 10%.
	for full, want := range map[bool]int{false: 22, true: 48} {
		vs := sweep(full, benchSettings(), shippedAgent())
		if len(vs) != want {
			t.Errorf("full %v: %d variants, want %d", full, len(vs), want)
		}
		shipped, tuned := 0, 0
		for _, v := range vs {
			shipped += count(v.shipped)
			tuned += count(v.tuned)
		}
		if shipped != 4 || tuned != 1 {
			t.Errorf("full %v: %d shipped and %d tuned variants, want one shipped per family and one tuned", full, shipped, tuned)
		}
		knobs := map[string]bool{}
		for _, v := range vs {
			if knobs[v.family+v.knobs] {
				t.Errorf("full %v: two variants %s %q", full, v.family, v.knobs)
			}
			knobs[v.family+v.knobs] = true
		}
		for _, withAgent := range []bool{false, true} {
			for _, s := range backfillSettings(full, withAgent, benchSettings()) {
				if err := s.Validate(); err != nil {
					t.Errorf("%s: %v", backfillKnobs(s), err)
				}
			}
		}
	}
}
