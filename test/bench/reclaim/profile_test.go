package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBurstsFollowTheirProfile draws many node-days of bursts and checks
// how often they start, how long they last, and the tail.
func TestBurstsFollowTheirProfile(t *testing.T) {
	const days = 2000
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			chance := p.startChance()
			var b burst
			var lengths []int
			running := 0
			for range days * minutesPerDay {
				extra := b.next(rng, p, chance)
				switch {
				case extra > 0:
					if extra < p.shareMin || extra > p.shareMax {
						t.Fatalf("a burst of %.2f of requests, want %.2f-%.2f", extra, p.shareMin, p.shareMax)
					}
					running++
				case running > 0:
					lengths = append(lengths, running)
					running = 0
				}
			}
			perDay := float64(len(lengths)) / days
			if math.Abs(perDay-p.burstsPerDay) > 0.05*p.burstsPerDay {
				t.Errorf("%.2f bursts per day, want %.0f", perDay, p.burstsPerDay)
			}
			sum, longer := 0, 0
			lo, hi := p.durations.min, p.durations.min+len(p.durations.weights)-1
			for _, l := range lengths {
				// Two bursts back to back read as one: at most twice the longest.
				if l < lo || l > 2*hi {
					t.Fatalf("a burst of %d minutes, want %d-%d", l, lo, hi)
				}
				sum += l
				if l > 15 {
					longer++
				}
			}
			if mean := float64(sum) / float64(len(lengths)); math.Abs(mean-p.durations.mean()) > 0.05*p.durations.mean() {
				t.Errorf("bursts last %.1f min on average, want %.1f", mean, p.durations.mean())
			}
			if share := float64(longer) / float64(len(lengths)); math.Abs(share-p.durations.longerThan(15)) > 0.03 {
				t.Errorf("%.2f of bursts last over 15 min, want %.2f", share, p.durations.longerThan(15))
			}
		})
	}
}

func TestDurations(t *testing.T) {
	cases := map[string]struct {
		d                        durations
		mean, longer15, longer30 float64
		tol                      float64
	}{
		"uniform 2-10: never past the CPU eviction delay": {d: uniformMinutes(2, 10), mean: 6, longer15: 0, longer30: 0, tol: 1e-9},
		"uniform 16-30: always past it":                   {d: uniformMinutes(16, 30), mean: 23, longer15: 1, longer30: 0, tol: 1e-9},
		// Lognormal, median 15, sigma 0.9: untruncated, P(X > 15) is 0.5
		// and P(X > 30) 0.22; truncated to 5-45 and rounded to whole
		// minutes, 0.47 and 0.13, a mean of 17.4.
		"harsh: heavy-tailed": {d: lognormalMinutes(15, 0.9, 5, 45), mean: 17.4, longer15: 0.47, longer30: 0.13, tol: 0.01},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sum := 0.0
			for _, w := range tc.d.weights {
				sum += w
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("weights sum to %.6f, want 1", sum)
			}
			if math.Abs(tc.d.mean()-tc.mean) > tc.tol*max(1, tc.mean) {
				t.Errorf("mean %.2f min, want %.2f", tc.d.mean(), tc.mean)
			}
			if got := tc.d.longerThan(15); math.Abs(got-tc.longer15) > tc.tol {
				t.Errorf("%.3f longer than 15 min, want %.3f", got, tc.longer15)
			}
			if got := tc.d.longerThan(30); math.Abs(got-tc.longer30) > tc.tol {
				t.Errorf("%.3f longer than 30 min, want %.3f", got, tc.longer30)
			}
		})
	}
}

func TestProfilesNamed(t *testing.T) {
	cases := map[string]struct {
		flag    string
		want    []string
		wantErr bool
	}{
		"all":       {flag: "all", want: []string{"default", "long-bursts", "harsh"}},
		"one":       {flag: "harsh", want: []string{"harsh"}},
		"a list":    {flag: "default,harsh", want: []string{"default", "harsh"}},
		"a mistake": {flag: "default,hash", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps, err := profilesNamed(tc.flag)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.name)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("profiles %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("profiles %v, want %v", got, tc.want)
				}
			}
		})
	}
}
