package cgroupsim

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestStepSharesTheNode(t *testing.T) {
	const capacity, system = 16, 0.5
	tests := map[string]struct {
		pods     []podCPU
		want     []podStep // wait left out
		wantLoad float64
	}{
		"online and offline fit: each uses what it asks": {
			pods:     []podCPU{{demand: 4, quota: -1}, {demand: 6, reclaimed: true, quota: -1}},
			want:     []podStep{{used: 4}, {used: 6}},
			wantLoad: 10.5 / 16,
		},
		"an offline pod's quota caps it and the rest is throttled": {
			pods:     []podCPU{{demand: 4, quota: -1}, {demand: 6, reclaimed: true, quota: 2.5}},
			want:     []podStep{{used: 4}, {used: 2.5, throttled: 3.5}},
			wantLoad: 7 / 16.0,
		},
		"an online pod's limit caps it as well": {
			pods:     []podCPU{{demand: 5, quota: 4}},
			want:     []podStep{{used: 4, throttled: 1}},
			wantLoad: 4.5 / 16,
		},
		"offline pods share what online pods and the system leave, by what they ask": {
			pods:     []podCPU{{demand: 11.5, quota: -1}, {demand: 6, reclaimed: true, quota: -1}, {demand: 2, reclaimed: true, quota: -1}},
			want:     []podStep{{used: 11.5}, {used: 3}, {used: 1}},
			wantLoad: 1,
		},
		"online pods asking for more than the node have it shared, offline pods get nothing": {
			pods:     []podCPU{{demand: 18.6, quota: -1}, {demand: 12.4, quota: -1}, {demand: 3, reclaimed: true, quota: -1}},
			want:     []podStep{{used: 9.3}, {used: 6.2}, {used: 0}},
			wantLoad: 1,
		},
		"idle-class use counts a quarter toward the load": {
			pods:     []podCPU{{demand: 4, quota: -1}, {demand: 10, reclaimed: true, quota: -1, idle: true}},
			want:     []podStep{{used: 4}, {used: 10}},
			wantLoad: 7 / 16.0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, load := step(capacity, system, tc.pods)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(podStep{}), cmpopts.IgnoreFields(podStep{}, "wait"), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("step (-want +got):\n%s", diff)
			}
			if math.Abs(load-tc.wantLoad) > 1e-9 {
				t.Errorf("load %v, want %v", load, tc.wantLoad)
			}
			for i, s := range got {
				if want := Wait(s.used, load); s.wait != want {
					t.Errorf("pod %d waits %v, want Wait(%v, %v) = %v", i, s.wait, s.used, load, want)
				}
			}
		})
	}
}

// The constants' promise, on a CPU node of the demo at the afternoon
// peak: 8 web pods using 1.6 cores each beside the node's 50m.
func TestWaitAtThePeak(t *testing.T) {
	const capacity, system, pods, use = 16, 0.05, 8, 1.6
	online := pods * use
	nodeWait := func(offline float64, idle bool) float64 {
		asks := []podCPU{{demand: offline, reclaimed: true, quota: -1, idle: idle}}
		for range pods {
			asks = append(asks, podCPU{demand: use, quota: -1})
		}
		steps, _ := step(capacity, system, asks)
		sum := 0.0
		for _, s := range steps[1:] {
			sum += s.wait
		}
		return sum
	}
	floor := 0.1 * capacity // the agent's --cpu-floor
	idleCPU := capacity - online - system
	tests := map[string]struct {
		offline       float64
		idle          bool
		atLeast, upTo float64
	}{
		"alone": {atLeast: 0.03, upTo: 0.05},
		"beside idle-class training at the floor":         {offline: floor, idle: true, atLeast: 0.05, upTo: 0.07},
		"beside idle-class training using every idle CPU": {offline: idleCPU, idle: true, atLeast: 0.08, upTo: 0.1},
		"beside training at the floor, not idle":          {offline: floor, atLeast: 0.15, upTo: 0.3},
		"beside training using every idle CPU, not idle":  {offline: idleCPU, atLeast: 1, upTo: math.Inf(1)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := nodeWait(tc.offline, tc.idle); got < tc.atLeast || got > tc.upTo {
				t.Errorf("the online pods wait %.3f s/s together, want %.2f to %.2f", got, tc.atLeast, tc.upTo)
			}
		})
	}
}

func TestWaitIsBounded(t *testing.T) {
	if got := Wait(100, 1); got != 1 {
		t.Errorf("Wait on a full node of a pod using 100 cores: %v, want 1 (a pressure share)", got)
	}
	if got := Wait(2, 0); got != 0 {
		t.Errorf("Wait on an empty node: %v, want 0", got)
	}
	if got := Wait(0, 0.99); got != 0 {
		t.Errorf("Wait of a pod using nothing: %v, want 0", got)
	}
	prev := 0.0
	for load := 0.0; load <= 1; load += 0.05 {
		w := Wait(1, load)
		if w < prev {
			t.Errorf("Wait(1, %.2f) = %v below Wait at a lighter load %v", load, w, prev)
		}
		prev = w
	}
}
