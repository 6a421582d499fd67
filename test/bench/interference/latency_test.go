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
		{start: t0.Add(-time.Millisecond), latency: time.Hour}, // before the window
		{start: t0, latency: 2 * time.Millisecond},
		{start: t0.Add(time.Second), latency: 4 * time.Millisecond, failed: true},
		{start: t0.Add(2 * time.Second), latency: time.Hour}, // the window's end is open
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
		samples = append(samples, sample{start: t0.Add(time.Duration(i) * 100 * time.Millisecond), latency: lat})
	}
	got := slidingP99(samples, t0, t0.Add(3*time.Second), t0, time.Second, time.Second)
	want := []point{{1, 1}, {2, 50}, {3, 1}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(point{})); diff != "" {
		t.Errorf("slidingP99 (-want +got):\n%s", diff)
	}
}

func TestRecoveryOf(t *testing.T) {
	tests := map[string]struct {
		p99  []point
		want recovery
	}{
		"never over": {
			p99:  []point{{-1, 9}, {1, 1}, {6, 1}},
			want: recovery{recovered: true, late: 1},
		},
		"over before the burst does not count": {
			p99:  []point{{-1, 20}, {1, 1}},
			want: recovery{recovered: true},
		},
		"back after 2 s": {
			p99:  []point{{1, 20}, {2, 20}, {3, 1}, {6, 1}, {7, 1}},
			want: recovery{after: 2 * time.Second, recovered: true, late: 2},
		},
		"over again late: recovery is the last window over": {
			p99:  []point{{1, 20}, {3, 1}, {6, 1}, {8, 20}, {9, 1}},
			want: recovery{after: 8 * time.Second, recovered: true, late: 3, overLate: 1.0 / 3},
		},
		"still over at the end": {
			p99:  []point{{1, 20}, {6, 1}, {9, 20}},
			want: recovery{after: 9 * time.Second, late: 2, overLate: 0.5},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := recoveryOf(tc.p99, 10, 5*time.Second)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(recovery{})); diff != "" {
				t.Errorf("recoveryOf (-want +got):\n%s", diff)
			}
		})
	}
}
