package latencysim

import (
	"math"
	"testing"
	"time"
)

// demoPod is a pod of the demo's online service at use cores, on a node
// of 16 cores whose pods request 16 and use nodeUse.
func demoPod(use, nodeUse float64) Load {
	return Load{Use: use, Request: 2, Limit: 4, NodeCapacity: 16, NodeUse: nodeUse, NodeRequests: 16}
}

func TestSpareCPU(t *testing.T) {
	cases := map[string]struct {
		load Load
		want float64
	}{
		"the rest of the request and a share of the idle node by request": {
			// idle 16-12.8 = 3.2, a 2/16 share of it 0.4; 2-1.6+0.4.
			load: demoPod(1.6, 12.8), want: 0.8,
		},
		"offline pods using the idle CPU leave the rest of the request": {
			load: demoPod(1.6, 16), want: 0.4,
		},
		"a node used beyond its capacity has no idle CPU to share": {
			load: demoPod(1.6, 20), want: 0.4,
		},
		"the limit caps the share of the idle CPU": {
			// idle 14, all of it the pod's by request, but only 4-2 above its request.
			load: Load{Use: 1, Request: 2, Limit: 4, NodeCapacity: 16, NodeUse: 2, NodeRequests: 2}, want: 3,
		},
		"without a limit the whole share": {
			load: Load{Use: 1, Request: 2, NodeCapacity: 16, NodeUse: 2, NodeRequests: 2}, want: 15,
		},
		"a limit at the request leaves no share": {
			load: Load{Use: 1, Request: 2, Limit: 2, NodeCapacity: 16, NodeUse: 2, NodeRequests: 2}, want: 1,
		},
		"a pod requesting nothing gets no share of the idle CPU": {
			load: Load{Use: 0.01, NodeCapacity: 16, NodeUse: 2, NodeRequests: 0}, want: MinSpareCPU,
		},
		"a pod using more than it can get has the least spare CPU": {
			load: demoPod(3, 16), want: MinSpareCPU,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SpareCPU(tc.load); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("SpareCPU(%+v) = %v, want %v", tc.load, got, tc.want)
			}
		})
	}
}

// TestP99 checks the shape of the latency against contention: the P99 is
// ln(100) mean response times, rises as offline pods take the node's idle
// CPU, more when the pod is busy, and is bounded.
func TestP99(t *testing.T) {
	cases := map[string]struct {
		load     Load
		min, max time.Duration
	}{
		"night, alone":                        {load: demoPod(0.32, 2.56), min: 35 * time.Millisecond, max: 45 * time.Millisecond},
		"night, offline pods filling to 90%":  {load: demoPod(0.32, 14.4), min: 65 * time.Millisecond, max: 80 * time.Millisecond},
		"peak, alone":                         {load: demoPod(1.6, 12.8), min: 160 * time.Millisecond, max: 180 * time.Millisecond},
		"peak, offline pods filling to 90%":   {load: demoPod(1.6, 14.4), min: 220 * time.Millisecond, max: 240 * time.Millisecond},
		"peak, offline pods filling the node": {load: demoPod(1.6, 16), min: 330 * time.Millisecond, max: 350 * time.Millisecond},
		"overloaded, bounded":                 {load: demoPod(5, 30), min: 2700 * time.Millisecond, max: 2800 * time.Millisecond},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := P99(tc.load)
			if got < tc.min || got > tc.max {
				t.Errorf("P99 = %v, want %v to %v", got, tc.min, tc.max)
			}
			if want := ln100 * CPUPerRequest / SpareCPU(tc.load); math.Abs(got.Seconds()-want) > 1e-6 {
				t.Errorf("P99 = %v, want ln(100) x %v / spare CPU = %.6fs", got, CPUPerRequest, want)
			}
		})
	}
	for _, use := range []float64{0.32, 1.0, 1.6} {
		alone, beside := P99(demoPod(use, use*8)), P99(demoPod(use, 16))
		if beside <= alone {
			t.Errorf("at %v cores, P99 beside offline pods %v, want it above alone %v", use, beside, alone)
		}
	}
	if night, peak := P99(demoPod(0.32, 16))-P99(demoPod(0.32, 2.56)), P99(demoPod(1.6, 16))-P99(demoPod(1.6, 12.8)); peak <= night {
		t.Errorf("offline pods cost a busy pod %v of P99 and an idle one %v: want more for the busy one", peak, night)
	}
}

func TestRequestRate(t *testing.T) {
	cases := map[string]struct {
		use, want float64
	}{
		"follows CPU use":  {use: 1.5, want: 50},
		"none without use": {use: 0, want: 0},
		"never negative":   {use: -1, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := RequestRate(Load{Use: tc.use}); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("RequestRate at %v cores = %v, want %v", tc.use, got, tc.want)
			}
		})
	}
}
