package gpuloan

import (
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// A pause undoes the work since the job's last checkpoint on the loan, or
// since its first pod started; nothing after a checkpoint on the notice.
func TestWorkLost(t *testing.T) {
	pods := []*clusterview.Pod{
		gpuPod("train-worker-0", "a-0", colocation.TierOffline, "train", 2, t0.Add(time.Minute)),
		gpuPod("train-worker-1", "a-0", colocation.TierOffline, "train", 2, t0),
	}
	returning := LoanState{Phase: PhaseReturning, Pool: "A100", GPUs: 4, NoticeAt: t0.Add(50 * time.Minute), Deadline: t0.Add(time.Hour)}
	now := t0.Add(time.Hour)
	cases := map[string]struct {
		checkpoint time.Time
		pods       []*clusterview.Pod
		want       time.Duration
	}{
		"no checkpoint: since the first pod started":   {pods: pods, want: time.Hour},
		"a checkpoint from before the loan":            {checkpoint: t0.Add(-time.Hour), pods: pods, want: time.Hour},
		"a checkpoint on the loan, before the notice":  {checkpoint: t0.Add(40 * time.Minute), pods: pods, want: 20 * time.Minute},
		"a checkpoint after the notice: the handshake": {checkpoint: t0.Add(55 * time.Minute), pods: pods, want: 0},
		"pods gone, no checkpoint: unknown":            {want: 0},
	}
	for name, tc := range cases {
		if got := workLost(jobWithCheckpoint(tc.checkpoint), returning, tc.pods, now); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
