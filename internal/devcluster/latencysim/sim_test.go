package latencysim

import (
	"math"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func podLoad(name string, load Load) PodLoad {
	return PodLoad{Namespace: "shop", Pod: name, UID: types.UID("uid-" + name), Node: "cpu-0", Metric: "http_server_request_duration_seconds", Load: load}
}

// quantile estimates the q-quantile from cumulative buckets as
// Prometheus's histogram_quantile does: linear within the bucket.
func quantile(q float64, h Histogram) float64 {
	bounds := make([]float64, 0, len(h.Buckets))
	for b := range h.Buckets {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	rank := q * float64(h.Count)
	lower, below := 0.0, 0.0
	for _, b := range bounds {
		c := float64(h.Buckets[b])
		if c >= rank {
			return lower + (b-lower)*(rank-below)/(c-below)
		}
		lower, below = b, c
	}
	return math.Inf(1)
}

// run advances a fresh simulator over d, a step at a time, and returns
// the last histograms.
func run(seed uint64, loads []PodLoad, d time.Duration) []Histogram {
	s := NewSimulator(seed)
	var out []Histogram
	for at := time.Duration(0); at <= d; at += 5 * time.Second {
		out = s.Advance(loads, t0.Add(at))
	}
	return out
}

// TestSimulatorMatchesTheModel: the histogram's P99, estimated as
// Prometheus does, is within a bucket of the model's, and the count is
// the request rate over the time simulated.
func TestSimulatorMatchesTheModel(t *testing.T) {
	cases := map[string]Load{
		"night, alone":                        demoPod(0.32, 2.56),
		"peak, alone":                         demoPod(1.6, 12.8),
		"peak, offline pods filling to 90%":   demoPod(1.6, 14.4),
		"peak, offline pods filling the node": demoPod(1.6, 16),
	}
	for name, load := range cases {
		t.Run(name, func(t *testing.T) {
			const d = 10 * time.Minute
			h := run(1, []PodLoad{podLoad("web", load)}, d)[0]
			if want := RequestRate(load) * d.Seconds(); math.Abs(float64(h.Count)-want) > 1 {
				t.Errorf("count %d over %v, want %.0f", h.Count, d, want)
			}
			got, want := quantile(0.99, h), P99(load).Seconds()
			if math.Abs(got-want)/want > 0.1 {
				t.Errorf("P99 from the buckets %.4fs, want within 10%% of the model's %.4fs", got, want)
			}
			if mean := h.Sum / float64(h.Count); math.Abs(mean-MeanLatency(load))/MeanLatency(load) > 0.1 {
				t.Errorf("mean %.4fs, want within 10%% of %.4fs", mean, MeanLatency(load))
			}
		})
	}
}

// TestSimulatorShowsATenPercentChange: a P99 10% higher reads higher
// from the buckets.
func TestSimulatorShowsATenPercentChange(t *testing.T) {
	base := demoPod(1.6, 12.8)
	worse := base
	worse.Use = 1.6 + 0.1*SpareCPU(base)/1.1 // spare CPU down to 1/1.1: P99 up 10%
	loads := []PodLoad{podLoad("base", base), podLoad("worse", worse)}
	h := run(1, loads, 10*time.Minute)
	if a, b := quantile(0.99, h[0]), quantile(0.99, h[1]); b/a < 1.05 {
		t.Errorf("P99 %.4fs against %.4fs: a 10%% rise shows as %.1f%%", b, a, 100*(b/a-1))
	}
}

func TestSimulatorIsDeterministicPerSeed(t *testing.T) {
	loads := []PodLoad{podLoad("web", demoPod(1.6, 14.4))}
	a, b, other := run(7, loads, time.Minute), run(7, loads, time.Minute), run(8, loads, time.Minute)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs of one seed differ (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, other) {
		t.Errorf("seeds 7 and 8 drew the same requests")
	}
}

func TestSimulatorSteps(t *testing.T) {
	load := demoPod(1.5, 12) // 50 requests a second
	cases := map[string]struct {
		scrapes   []time.Duration // after t0
		wantCount uint64
	}{
		"a new pod starts empty":                      {scrapes: []time.Duration{0}, wantCount: 0},
		"whole seconds only":                          {scrapes: []time.Duration{0, 2500 * time.Millisecond}, wantCount: 100},
		"the rest of a second counts at the next":     {scrapes: []time.Duration{0, 2500 * time.Millisecond, 3500 * time.Millisecond}, wantCount: 150},
		"a long gap is simulated for its last minute": {scrapes: []time.Duration{0, time.Hour}, wantCount: 3000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := NewSimulator(1)
			var h []Histogram
			for _, at := range tc.scrapes {
				h = s.Advance([]PodLoad{podLoad("web", load)}, t0.Add(at))
			}
			if h[0].Count != tc.wantCount {
				t.Errorf("count %d, want %d", h[0].Count, tc.wantCount)
			}
		})
	}
}

// TestSimulatorForgetsGonePods: a pod that leaves and comes back under
// its name with a new UID starts from empty buckets, as a new pod's
// counters do.
func TestSimulatorForgetsGonePods(t *testing.T) {
	s := NewSimulator(1)
	web := podLoad("web", demoPod(1.5, 12))
	s.Advance([]PodLoad{web}, t0)
	if h := s.Advance([]PodLoad{web}, t0.Add(10*time.Second)); h[0].Count == 0 {
		t.Fatal("no requests in 10s at 50 per second")
	}
	if h := s.Advance(nil, t0.Add(20*time.Second)); len(h) != 0 || len(s.pods) != 0 {
		t.Errorf("a pod gone from the loads: %d histograms, %d kept, want none", len(h), len(s.pods))
	}
	web.UID = "uid-2"
	if h := s.Advance([]PodLoad{web}, t0.Add(30*time.Second)); h[0].Count != 0 {
		t.Errorf("a recreated pod starts with %d requests, want 0", h[0].Count)
	}
}
