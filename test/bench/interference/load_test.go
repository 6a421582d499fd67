package main

import (
	"testing"
	"time"
)

// The plan is an open loop: every request's due time is fixed in advance,
// at the base rate until the burst and at the burst rate from then on.
func TestLoadPlanIsOpenLoop(t *testing.T) {
	p := loadPlan{base: 100, burst: 300, at: time.Second, length: 2 * time.Second}
	tests := map[string]struct {
		i    int
		want time.Duration
	}{
		"the first is due at once":              {0, 0},
		"at the base rate":                      {50, 500 * time.Millisecond},
		"the burst's first is due at its start": {100, time.Second},
		"in the burst three times as often":     {103, time.Second + 10*time.Millisecond},
		"the last before the end":               {399, 2*time.Second - 3333334},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := p.due(tc.i); (got - tc.want).Abs() > time.Microsecond {
				t.Errorf("due(%d) = %s, want %s", tc.i, got, tc.want)
			}
		})
	}
	if got := p.requests(); got != 400 {
		t.Errorf("requests() = %d, want 100 before the burst and 300 in it", got)
	}
}
