package report

import (
	"testing"
	"time"
)

// TestLimitsForgetIdlePods: a pod silent for limiterIdle is forgotten, and
// comes back with a full burst.
func TestLimitsForgetIdlePods(t *testing.T) {
	l := newPodLimits()
	for range reportBurst {
		if !l.allow("a", t0) {
			t.Fatal("the burst is refused")
		}
	}
	if l.allow("a", t0) {
		t.Fatal("a report past the burst is allowed")
	}
	l.allow("b", t0.Add(limiterIdle/2))
	l.allow("c", t0.Add(limiterIdle))
	if _, ok := l.pods["a"]; ok {
		t.Error("pod a, silent for limiterIdle, is remembered")
	}
	if len(l.pods) != 2 {
		t.Errorf("%d pods remembered, want b and c", len(l.pods))
	}
}

// TestLimitRefills: the limit refills at reportsPerSecond.
func TestLimitRefills(t *testing.T) {
	l := newPodLimits()
	now := t0
	for range reportBurst {
		l.allow("a", now)
	}
	allowed := 0
	for range 10 * reportsPerSecond {
		now = now.Add(time.Second / (2 * reportsPerSecond))
		if l.allow("a", now) {
			allowed++
		}
	}
	if allowed != 5*reportsPerSecond {
		t.Errorf("%d reports allowed in 5 s of trying twice as often, want %d", allowed, 5*reportsPerSecond)
	}
}
