package main

import (
	"testing"
	"time"
)

func TestStepPacerIsOpenLoop(t *testing.T) {
	p := stepPacer{base: 100, burst: 300, at: time.Second}
	tests := map[string]struct {
		elapsed  time.Duration
		hits     uint64
		wantWait time.Duration
	}{
		"first hit at once":                         {0, 0, 0},
		"on schedule: wait for the next":            {5 * time.Millisecond, 1, 5 * time.Millisecond},
		"behind schedule: send at once":             {500 * time.Millisecond, 10, -400 * time.Millisecond},
		"the burst's first hit is due at its start": {990 * time.Millisecond, 100, 10 * time.Millisecond},
		"in the burst hits come 3 times as often":   {time.Second, 101, 3333333},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			wait, stop := p.Pace(tc.elapsed, tc.hits)
			if stop {
				t.Fatal("Pace stopped; the attack's duration ends it")
			}
			if wait != tc.wantWait {
				t.Errorf("Pace(%s, %d) waits %s, want %s", tc.elapsed, tc.hits, wait, tc.wantWait)
			}
		})
	}
	if got := p.Rate(2 * time.Second); got != 300 {
		t.Errorf("Rate during the burst = %g, want 300", got)
	}
}
