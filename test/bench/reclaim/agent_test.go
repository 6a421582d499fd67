package main

import (
	"math"
	"testing"
)

// TestAgentCeiling: a minute of the agent's own ticks at the minute's
// use gives its ceiling.
func TestAgentCeiling(t *testing.T) {
	a := agentSettings{cpuThreshold: 85, cpuActivation: 40, cpuFloor: 10, memoryThreshold: 90}
	cases := map[string]struct {
		online, system, want float64
	}{
		"light online work: no ceiling, the kernel's weights": {online: 10, system: 0.4, want: math.Inf(1)},
		"at the activation: 85% less online and system":       {online: 12.4, system: 0.4, want: 27.2 - 12.8},
		"busy online: never below the floor":                  {online: 26, system: 0.4, want: 3.2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, engaged := newNodeGovernor(a, 32).minute(tc.online, tc.system)
			if math.Abs(got-tc.want) > 1e-9 && !(math.IsInf(got, 1) && math.IsInf(tc.want, 1)) {
				t.Errorf("ceiling %.2f, want %.2f", got, tc.want)
			}
			if engaged == math.IsInf(got, 1) {
				t.Errorf("engaged %v with a ceiling of %.2f", engaged, got)
			}
		})
	}
}

// TestTheCeilingFollowsOnlineUseMinuteByMinute: the agent's state goes on
// from minute to minute: the ceiling drops with a burst at once and
// comes back when it ends.
func TestTheCeilingFollowsOnlineUseMinuteByMinute(t *testing.T) {
	g := newNodeGovernor(agentSettings{cpuThreshold: 85, cpuActivation: 0, cpuFloor: 10}, 32)
	for _, step := range []struct{ online, want float64 }{{8, 27.2 - 8.4}, {20, 27.2 - 20.4}, {8, 27.2 - 8.4}} {
		if got, _ := g.minute(step.online, 0.4); math.Abs(got-step.want) > 1e-9 {
			t.Errorf("online %.0f cores: ceiling %.2f, want %.2f", step.online, got, step.want)
		}
	}
}

// TestTheCeilingKeepsTheAgentsHysteresis: the agent's own decision holds
// its ceiling while use is between the activation and the band below it,
// and releases it after a minute below the band.
func TestTheCeilingKeepsTheAgentsHysteresis(t *testing.T) {
	a := shippedAgent() // activation 40%, band 10 points, released after 10 ticks
	g := newNodeGovernor(a, 32)
	for _, step := range []struct {
		name    string
		online  float64
		engaged bool
	}{
		{"light", 8, false},
		{"above the activation (14 of 32)", 14, true},
		{"between the marks (11 of 32)", 11, true},
		{"below the band (8 of 32) for a minute", 8, false},
		{"between the marks again: not engaged", 11, false},
	} {
		if _, engaged := g.minute(step.online, 0.4); engaged != step.engaged {
			t.Errorf("%s: engaged %v, want %v", step.name, engaged, step.engaged)
		}
	}
}

func TestAgentMemoryNeed(t *testing.T) {
	a := agentSettings{memoryThreshold: 90}
	cases := map[string]struct {
		used, releasing, want float64
	}{
		"below the threshold": {used: 115, want: 0},
		// 90% of 128 is 115.2; down to 88%, 112.64.
		"above it: down to 2 points below":              {used: 120, want: 120 - 112.64},
		"terminating pods count as released":            {used: 120, releasing: 3, want: 120 - 112.64 - 3},
		"terminating pods release enough: nothing more": {used: 120, releasing: 10, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := a.memoryNeed(128, tc.used, tc.releasing); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("need %.3f GiB, want %.3f", got, tc.want)
			}
		})
	}
	if got := (agentSettings{}).memoryNeed(128, 127, 0); got != 0 {
		t.Errorf("memory threshold 0 (off): need %.2f, want none", got)
	}
}

// TestTheAgentEvictsForMemoryLeastWorkLostFirst: above 90% of the node's
// memory the agent evicts, without notice, the replica whose job loses
// least, as the manager ranks them.
func TestTheAgentEvictsForMemoryLeastWorkLostFirst(t *testing.T) {
	spec := defaultNodeSpec()
	tr := flat(8, 60, 100)
	a := shippedAgent()
	b := newBackfill(spec, tr, perfect(tr), benchSettings(), &a)
	c := newCluster(spec, 1)
	old := gangOn(c, resources{cpu: 4, memory: 30}, 1e6, 0)
	young := gangOn(c, resources{cpu: 4, memory: 30}, 1e6, 0)
	for m := range 60 {
		old.progress(m, 1)
	}
	young.started, young.savedAt = 55, -1 // started 5 minutes before: little to lose
	young.risk.Since = clock(55)
	old.risk.Since = clock(40)
	old.replicas[0].memoryUse, young.replicas[0].memoryUse = 30, 30
	// 60 online + 60 offline + 0.9 system = 120.9 GiB: above 115.2.
	ev := &recorder{}
	b.protect(c.nodes[0], 60, ev)
	if len(ev.evicted) != 1 || ev.evicted[0].job != young || ev.noticed[0] {
		t.Errorf("evicted %v (noticed %v), want the young job's replica, without notice", ev.evicted, ev.noticed)
	}
	none := &recorder{}
	newBackfill(spec, tr, perfect(tr), benchSettings(), nil).protect(c.nodes[0], 60, none)
	if len(none.evicted) != 0 {
		t.Error("backfill without its agent evicted for memory on the node")
	}
}
