package gpuloan

import (
	"testing"
	"time"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// A lent job's checkpoint interval is the gap between the last two
// checkpoints it reported on its current loan: not one from before the
// loan, not one it made on a notice. Once off loan, its loan state's
// interval stands.
func TestIntervalsLearntFromCheckpoints(t *testing.T) {
	iv := newIntervals()
	nodes := []*clusterview.Node{gpuNode("a-0", "A100", 8)}
	pods := []*clusterview.Pod{gpuPod("train-worker-0", "a-0", colocation.TierOffline, "train", 4, t0)}
	seen := func(checkpoint time.Time, s LoanState) time.Duration {
		job := jobWithCheckpoint(checkpoint)
		if s.Phase != "" {
			job.Annotations = map[string]string{LoanAnnotation: s.annotation()}
		}
		iv.observe(clusterOf(nodes, pods, []kubeflowv1.TFJob{*job}))
		return iv.of("ns/train", s)
	}
	lent := LoanState{Phase: PhaseLent, Pool: "A100", GPUs: 4}
	steps := []struct {
		name       string
		checkpoint time.Time
		state      LoanState
		want       time.Duration
	}{
		{"a checkpoint from before the loan", t0.Add(-time.Hour), LoanState{}, 0},
		{"the loan's first checkpoint", t0.Add(5 * time.Minute), LoanState{}, 0},
		{"the same one again", t0.Add(5 * time.Minute), LoanState{}, 0},
		{"the second", t0.Add(15 * time.Minute), lent, 10 * time.Minute},
		{"the third, sooner", t0.Add(23 * time.Minute), lent, 8 * time.Minute},
		{"the notice's checkpoint", t0.Add(25 * time.Minute), LoanState{Phase: PhaseReturning, Pool: "A100", GPUs: 4}, 8 * time.Minute},
	}
	for _, st := range steps {
		if got := seen(st.checkpoint, st.state); got != st.want {
			t.Errorf("%s: interval %v, want %v", st.name, got, st.want)
		}
	}
	pods = nil
	paused := LoanState{Phase: PhasePaused, Pool: "A100", GPUs: 4, CheckpointIntervalSeconds: 480}
	if got := seen(t0.Add(25*time.Minute), paused); got != 8*time.Minute || len(iv.jobs) != 0 {
		t.Errorf("Paused: interval %v, %d jobs remembered; want the state's 8m0s and none", got, len(iv.jobs))
	}
}
