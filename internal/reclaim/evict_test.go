package reclaim

import (
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/clusterview"
)

func TestDue(t *testing.T) {
	notice := 20 * time.Second
	stopAt := now.Add(10 * time.Second) // noticed 10 s ago
	pod := &clusterview.Pod{StopReason: ReasonReclaimedForOnline, StopAt: stopAt}
	cases := map[string]struct {
		checkpoint time.Time
		now        time.Time
		want       bool
	}{
		"under notice, no checkpoint":              {now: now},
		"a checkpoint from before the notice":      {checkpoint: now.Add(-time.Minute), now: now},
		"a checkpoint after the notice: at once":   {checkpoint: now.Add(-5 * time.Second), now: now, want: true},
		"the notice ran out":                       {now: stopAt, want: true},
		"the notice ran out long ago":              {now: stopAt.Add(time.Hour), want: true},
		"a checkpoint right as the notice started": {checkpoint: stopAt.Add(-notice), now: now},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := due(pod, tc.checkpoint, notice, tc.now); got != tc.want {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
}
