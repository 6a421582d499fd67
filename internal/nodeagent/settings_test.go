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
