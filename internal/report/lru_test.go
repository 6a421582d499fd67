package report

import (
	"testing"
	"time"
)

// TestLRU: an entry lives until its time; a full lru pushes out the entry
// used least lately, not the one added first.
func TestLRU(t *testing.T) {
	c := newLRU[string, int](2)
	c.add("a", 1, t0.Add(time.Minute))
	c.add("b", 2, t0.Add(time.Minute))
	if v, ok := c.get("a", t0); !ok || v != 1 {
		t.Fatalf("a: %v %v, want 1", v, ok)
	}
	c.add("c", 3, t0.Add(time.Minute)) // pushes out b, used least lately
	if _, ok := c.get("b", t0); ok {
		t.Error("b, used least lately, is still there")
	}
	for key, want := range map[string]int{"a": 1, "c": 3} {
		if v, ok := c.get(key, t0); !ok || v != want {
			t.Errorf("%s: %v %v, want %d", key, v, ok, want)
		}
	}
	c.add("a", 4, t0.Add(time.Second)) // replaces, with its new time
	if v, ok := c.get("a", t0); !ok || v != 4 || c.len() != 2 {
		t.Errorf("a: %v %v with %d entries, want 4 of 2", v, ok, c.len())
	}
	if _, ok := c.get("a", t0.Add(time.Second)); ok {
		t.Error("a is there at its time")
	}
	if c.len() != 1 {
		t.Errorf("%d entries, want the expired one gone", c.len())
	}
}
