package main

import (
	"math"
	"testing"
)

func TestShareCPU(t *testing.T) {
	spec := defaultNodeSpec() // 32 CPU, system 0.4: 31.6 for pods
	inf := math.Inf(1)
	cases := map[string]struct {
		m               minute
		cap             float64
		bestEffort      bool
		online, offline float64
		cpuUnmet, hot   bool
	}{
		"room for both": {
			m: minute{online: resources{cpu: 8}, offline: resources{cpu: 10}}, cap: inf, bestEffort: true,
			online: 8, offline: 10,
		},
		"BestEffort offline pods yield to online ones": {
			m: minute{online: resources{cpu: 20}, offline: resources{cpu: 20}}, cap: inf, bestEffort: true,
			online: 20, offline: 11.6, hot: true,
		},
		"offline pods with requests keep what they use; online pods starve": {
			m: minute{online: resources{cpu: 25}, offline: resources{cpu: 9}}, cap: inf, bestEffort: false,
			online: 22.6, offline: 9, cpuUnmet: true, hot: true,
		},
		"a suppress cap slows offline pods down": {
			m: minute{online: resources{cpu: 8}, offline: resources{cpu: 10}}, cap: 5, bestEffort: true,
			online: 8, offline: 5,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := shareCPU(spec, tc.m, tc.cap, tc.bestEffort)
			if math.Abs(got.onlineCPU-tc.online) > 1e-9 || math.Abs(got.offlineCPU-tc.offline) > 1e-9 {
				t.Errorf("online got %.2f, offline %.2f; want %.2f, %.2f", got.onlineCPU, got.offlineCPU, tc.online, tc.offline)
			}
			if hot := got.busy(spec) > 0.9; got.cpuUnmet() != tc.cpuUnmet || hot != tc.hot {
				t.Errorf("unmet %v, above 90%% %v; want %v, %v", got.cpuUnmet(), hot, tc.cpuUnmet, tc.hot)
			}
			if want := tc.offline / tc.m.offline.cpu; math.Abs(got.served()-want) > 1e-9 {
				t.Errorf("offline pods served %.3f of their demand, want %.3f", got.served(), want)
			}
		})
	}
}

func TestMemoryUnmetWhenOfflineMemoryCannotBeTakenBack(t *testing.T) {
	spec := defaultNodeSpec() // 128 GiB, system 0.9
	fits := minute{online: resources{memory: 60}, offline: resources{memory: 67}}
	over := minute{online: resources{memory: 60}, offline: resources{memory: 67.5}}
	if fits.memoryUnmet(spec) || !over.memoryUnmet(spec) {
		t.Errorf("127.9 GiB unmet %v, 128.4 GiB unmet %v; want false, true", fits.memoryUnmet(spec), over.memoryUnmet(spec))
	}
}
