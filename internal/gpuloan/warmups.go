package gpuloan

import (
	"time"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// maxMeasuredWarmUp is the longest time from an online pod's creation to
// Ready taken as its warm-up: a Ready condition that last turned true
// hours after the pod's creation tells of a flap, not of a start.
const maxMeasuredWarmUp = time.Hour

// warmUps measures each online GPU workload's warm-up from its pods: the
// longest time from creation to Ready of any pod of it seen since the
// manager started. A backfill.dev/gpu-warm-up annotation states it
// instead; without either, --gpu-loan-warm-up stands.
type warmUps struct {
	// longest is by namespace/workload name.
	longest map[string]time.Duration
}

func newWarmUps() *warmUps { return &warmUps{longest: map[string]time.Duration{}} }

// observe takes the warm-ups of the online pods that request GPUs.
func (m *warmUps) observe(pods []*clusterview.Pod) {
	for _, p := range pods {
		if p.Tier != colocation.TierOnline || p.WarmUp <= 0 || p.WarmUp > maxMeasuredWarmUp {
			continue
		}
		key := p.Namespace + "/" + p.Workload
		m.longest[key] = max(m.longest[key], p.WarmUp)
	}
}

// of is the workload's measured warm-up, or fallback when none of its pods
// was seen Ready.
func (m *warmUps) of(w workload, fallback time.Duration) time.Duration {
	if d, ok := m.longest[w.String()]; ok {
		return d
	}
	return fallback
}

// keep forgets the workloads that are gone.
func (m *warmUps) keep(workloads []workload) {
	live := map[string]bool{}
	for _, w := range workloads {
		live[w.String()] = true
	}
	for key := range m.longest {
		if !live[key] {
			delete(m.longest, key)
		}
	}
}
