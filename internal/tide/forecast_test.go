package tide

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var sameTime = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

// fixed is a forecast of given steps.
type fixed []Step

func (f fixed) Steps(from, to time.Time) []Step { return clip(f, from, to) }

func at(h, m int) time.Time { return time.Date(2026, 12, 7, h, m, 0, 0, time.UTC) }

func TestPoolDemandSumsGPUsAndMovesRisesByWarmUp(t *testing.T) {
	workloads := []Workload{
		{Name: "a/chat", GPUsPerPod: 2, WarmUp: 10 * time.Minute,
			Replicas: fixed{{At: at(0, 0), Value: 1}, {At: at(7, 0), Value: 4}, {At: at(22, 0), Value: 1}}},
		{Name: "a/embed", GPUsPerPod: 1,
			Replicas: fixed{{At: at(0, 0), Value: 2}, {At: at(8, 0), Value: 6}}},
	}
	got, err := PoolDemand(workloads, at(0, 0), at(23, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{
		{At: at(0, 0), Value: 2 + 2},
		{At: at(6, 50), Value: 8 + 2}, // the rise 10 minutes early
		{At: at(8, 0), Value: 8 + 6},
		{At: at(22, 0), Value: 2 + 6}, // the fall where it is
	}
	if diff := cmp.Diff(want, got.Steps, sameTime); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

func TestPoolDemandRefusesBadInput(t *testing.T) {
	if _, err := PoolDemand([]Workload{{Name: "a/x"}}, at(0, 0), at(1, 0)); err == nil {
		t.Error("no error for a workload with no forecast")
	}
	if _, err := PoolDemand(nil, at(1, 0), at(1, 0)); err == nil {
		t.Error("no error for an empty horizon")
	}
}
