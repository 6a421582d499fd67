package nodeagent

import (
	"strings"
	"testing"
	"time"
)

func TestSettingsValidate(t *testing.T) {
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("DefaultSettings: %v", err)
	}
	cases := map[string]struct {
		change func(*Settings)
		want   string
	}{
		"interval too short":       {func(s *Settings) { s.Interval = time.Millisecond }, "--interval=1ms"},
		"threshold above 100":      {func(s *Settings) { s.CPUThreshold = 101 }, "--cpu-threshold=101"},
		"floor above threshold":    {func(s *Settings) { s.CPUFloor = 90 }, "--cpu-floor=90: must be from 0 to --cpu-threshold (85)"},
		"no growth":                {func(s *Settings) { s.CPUGrowth = 0 }, "--cpu-growth=0"},
		"memory threshold too low": {func(s *Settings) { s.MemoryThreshold = 5 }, "--memory-threshold=5"},
		"negative band":            {func(s *Settings) { s.CPUActivationBand = -1 }, "--cpu-activation-band=-1: must be a number of percent points"},
		"band as wide as the activation": {func(s *Settings) { s.CPUActivation, s.CPUActivationBand = 20, 20 },
			"--cpu-activation-band=20: must be below --cpu-activation (20), or a ceiling once set is never released"},
		"negative release ticks": {func(s *Settings) { s.CPUReleaseTicks = -1 }, "--cpu-release-ticks=-1: must be from 0 to 600"},
		"too many release ticks": {func(s *Settings) { s.CPUReleaseTicks = 601 }, "--cpu-release-ticks=601"},
	}
	// With no activation the ceiling always applies, and the band does not
	// matter.
	always := DefaultSettings()
	always.CPUActivation = 0
	if err := always.Validate(); err != nil {
		t.Errorf("--cpu-activation=0 with the default band: %v", err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := DefaultSettings()
			tc.change(&s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
