package main

import (
	"strings"
	"testing"
)

// TestTickLabelsAreRound: a tick at 1.2 reads 1.2, not the binary
// 1.2000000000000002.
func TestTickLabelsAreRound(t *testing.T) {
	for _, r := range [][2]float64{{1, 2}, {1.07, 1.35}, {1.5, 2.45}, {1.12, 2.1}, {0.1, 0.7}} {
		for _, tick := range (plainTicks{}).Ticks(r[0], r[1]) {
			if len(strings.TrimLeft(tick.Label, "0123456789")) > 3 {
				t.Errorf("range %v: tick %v labelled %q", r, tick.Value, tick.Label)
			}
		}
	}
}
