package nodeagent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// step is one tick a Governor is fed, in milli-cores, and what it must
// answer.
type step struct {
	online, system int64
	wantCeiling    int64
	wantEngaged    bool
}

func TestGovernor(t *testing.T) {
	// A node of 2 cores: the ceiling applies from 800m of online and
	// system use (40%), and is released after 3 ticks below 600m (30%).
	s := DefaultSettings()
	s.CPUThreshold, s.CPUActivation, s.CPUActivationBand, s.CPUReleaseTicks, s.CPUFloor, s.CPUGrowth = 85, 40, 10, 3, 10, 10
	cases := map[string]struct {
		settings func(*Settings)
		steps    []step
	}{
		"light: no ceiling": {
			steps: []step{{online: 300, system: 100, wantCeiling: -1}, {online: 700, system: 99, wantCeiling: -1}},
		},
		"engages at the activation, with what online and system leave below the threshold": {
			steps: []step{{online: 300, wantCeiling: -1}, {online: 700, system: 100, wantCeiling: 900, wantEngaged: true}},
		},
		"use that hovers at the activation keeps the ceiling": {
			steps: []step{
				{online: 800, wantCeiling: 900, wantEngaged: true},
				{online: 780, wantCeiling: 920, wantEngaged: true},
				{online: 820, wantCeiling: 880, wantEngaged: true},
				{online: 770, wantCeiling: 930, wantEngaged: true},
			},
		},
		"released after the release ticks below the band, not before": {
			steps: []step{
				{online: 800, wantCeiling: 900, wantEngaged: true},
				{online: 500, wantCeiling: 1100, wantEngaged: true},
				{online: 500, wantCeiling: 1200, wantEngaged: true},
				{online: 500, wantCeiling: -1},
				{online: 500, wantCeiling: -1},
			},
		},
		"a tick between the marks starts the count again": {
			steps: []step{
				{online: 800, wantCeiling: 900, wantEngaged: true},
				{online: 500, wantCeiling: 1100, wantEngaged: true},
				{online: 500, wantCeiling: 1200, wantEngaged: true},
				{online: 650, wantCeiling: 1050, wantEngaged: true},
				{online: 500, wantCeiling: 1200, wantEngaged: true},
				{online: 500, wantCeiling: 1200, wantEngaged: true},
				{online: 500, wantCeiling: -1},
			},
		},
		"engaged again, the ceiling starts from the budget": {
			steps: []step{
				{online: 900, wantCeiling: 800, wantEngaged: true},
				{online: 100, wantCeiling: 1000, wantEngaged: true},
				{online: 100, wantCeiling: 1200, wantEngaged: true},
				{online: 100, wantCeiling: -1},
				{online: 400, system: 400, wantCeiling: 900, wantEngaged: true},
			},
		},
		"a burst leaves offline the floor at once": {
			steps: []step{{online: 900, wantCeiling: 800, wantEngaged: true}, {online: 1900, system: 100, wantCeiling: 200, wantEngaged: true}},
		},
		"activation 0: always engaged, never released": {
			settings: func(s *Settings) { s.CPUActivation, s.CPUActivationBand = 0, 0 },
			steps: []step{
				{wantCeiling: 1700, wantEngaged: true}, {wantCeiling: 1700, wantEngaged: true},
				{wantCeiling: 1700, wantEngaged: true}, {wantCeiling: 1700, wantEngaged: true},
			},
		},
		"no band, no ticks: released on the first tick below": {
			settings: func(s *Settings) { s.CPUActivationBand, s.CPUReleaseTicks = 0, 0 },
			steps:    []step{{online: 800, wantCeiling: 900, wantEngaged: true}, {online: 799, wantCeiling: -1}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set := s
			if tc.settings != nil {
				tc.settings(&set)
			}
			g, err := NewGovernor(set, 2000)
			if err != nil {
				t.Fatal(err)
			}
			var got []step
			for _, st := range tc.steps {
				ceiling, engaged := g.Step(st.online, st.system)
				got = append(got, step{online: st.online, system: st.system, wantCeiling: ceiling, wantEngaged: engaged})
			}
			if diff := cmp.Diff(tc.steps, got, cmp.AllowUnexported(step{})); diff != "" {
				t.Errorf("ticks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewGovernorRefusesWhatCannotWork(t *testing.T) {
	bad := DefaultSettings()
	bad.CPUReleaseTicks = -1
	if _, err := NewGovernor(bad, 2000); err == nil || !strings.Contains(err.Error(), "--cpu-release-ticks=-1") {
		t.Errorf("NewGovernor with no release ticks = %v, want an error naming --cpu-release-ticks", err)
	}
	if _, err := NewGovernor(DefaultSettings(), 0); err == nil || !strings.Contains(err.Error(), "capacity") {
		t.Errorf("NewGovernor of a node of no CPU = %v, want an error about its capacity", err)
	}
}
