package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestQuantile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := map[string]struct {
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		"none":              {nil, 0.99, 0},
		"one":               {[]time.Duration{7}, 0.99, 7},
		"median of 100":     {hundred, 0.5, 50 * time.Millisecond},
		"P99 of 100":        {hundred, 0.99, 99 * time.Millisecond},
		"P99.9 of 100":      {hundred, 0.999, 100 * time.Millisecond},
		"quantile 0 is min": {hundred, 0, time.Millisecond},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := quantile(tc.sorted, tc.q); got != tc.want {
				t.Errorf("quantile(%v) = %s, want %s", tc.q, got, tc.want)
			}
		})
	}
}

func TestSummarizeKeepsTheWindowAndCountsFailures(t *testing.T) {
	t0 := time.Unix(1000, 0)
	samples := []sample{
		{due: t0.Add(-time.Millisecond), latency: time.Hour}, // before the window
		{due: t0, latency: 2 * time.Millisecond},
		{due: t0.Add(time.Second), latency: 4 * time.Millisecond, failed: true},
		{due: t0.Add(2 * time.Second), latency: time.Hour}, // the window's end is open
	}
	got := summarize(samples, t0, t0.Add(2*time.Second))
	want := latencyStats{requests: 2, failed: 1, p50: 2 * time.Millisecond, p99: 4 * time.Millisecond, p999: 4 * time.Millisecond}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(latencyStats{})); diff != "" {
		t.Errorf("summarize (-want +got):\n%s", diff)
	}
}

func TestSlidingP99(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// 10 requests a second for 3 s; those of the second second are slow.
	var samples []sample
	for i := range 30 {
		lat := time.Millisecond
		if i >= 10 && i < 20 {
			lat = 50 * time.Millisecond
		}
		samples = append(samples, sample{due: t0.Add(time.Duration(i) * 100 * time.Millisecond), latency: lat})
	}
	got := slidingP99(samples, t0, t0.Add(3*time.Second), t0, time.Second, time.Second)
	want := []point{{1, 1}, {2, 50}, {3, 1}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(point{})); diff != "" {
		t.Errorf("slidingP99 (-want +got):\n%s", diff)
	}
}

func TestRecoveredAfter(t *testing.T) {
	tests := map[string]struct {
		p99       []point
		wantAfter time.Duration
		wantOK    bool
	}{
		"never over":            {[]point{{1, 1}, {2, 1}}, 0, true},
		"back after 2 s":        {[]point{{1, 20}, {2, 20}, {3, 1}, {4, 1}}, 2 * time.Second, true},
		"over again later":      {[]point{{1, 20}, {2, 1}, {5, 20}, {6, 1}}, 5 * time.Second, true},
		"still over at the end": {[]point{{1, 1}, {2, 20}}, 2 * time.Second, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			after, ok := recoveredAfter(tc.p99, 10)
			if after != tc.wantAfter || ok != tc.wantOK {
				t.Errorf("recoveredAfter = %s, %v; want %s, %v", after, ok, tc.wantAfter, tc.wantOK)
			}
		})
	}
}
