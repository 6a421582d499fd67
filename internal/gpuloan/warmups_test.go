package gpuloan

import (
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// A workload's warm-up is the longest any of its online pods took to be
// Ready, a flap aside; a workload none of whose pods was seen Ready has
// the fallback, and a workload gone is forgotten.
func TestWarmUpsMeasuredFromPods(t *testing.T) {
	pod := func(name, workload string, tier colocation.Tier, warmUp time.Duration) *clusterview.Pod {
		p := gpuPod(name, "a-0", tier, "", 2, t0)
		p.Workload, p.WarmUp = workload, warmUp
		return p
	}
	m := newWarmUps()
	m.observe([]*clusterview.Pod{
		pod("infer-a", "infer", colocation.TierOnline, 40*time.Second),
		pod("infer-b", "infer", colocation.TierOnline, 90*time.Second),
		pod("infer-c", "infer", colocation.TierOnline, 3*time.Hour), // a flap
		pod("infer-d", "infer", colocation.TierOnline, 0),           // not Ready
		pod("train-0", "infer", colocation.TierOffline, 10*time.Minute),
	})
	m.observe([]*clusterview.Pod{pod("infer-e", "infer", colocation.TierOnline, time.Minute)})
	infer := workload{kind: "Deployment", namespace: "ns", name: "infer"}
	other := workload{kind: "Deployment", namespace: "ns", name: "other"}
	if got := m.of(infer, 3*time.Minute); got != 90*time.Second {
		t.Errorf("infer's warm-up = %v, want the longest seen, 1m30s", got)
	}
	if got := m.of(other, 3*time.Minute); got != 3*time.Minute {
		t.Errorf("A workload never seen Ready: %v, want the fallback 3m0s", got)
	}
	m.keep([]workload{other})
	if got := m.of(infer, 3*time.Minute); got != 3*time.Minute {
		t.Errorf("infer gone and back: %v, want the fallback 3m0s", got)
	}
}
