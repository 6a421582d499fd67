package tfjob

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/progress"
)

// takeProgress puts what training code reported since the last write
// (reported) into the new status. A checkpoint, and a job's first report,
// go in at once: stop notices and the choice of eviction victims wait
// for checkpoints. The step alone waits until the status was last written
// interval ago, so that however often a job's pods report, their steps
// write its status at most once per interval (progress.StepInterval). It
// returns how long the step is held back; 0 when it is not.
func (p *plan) takeProgress(before *kubeflowv1.JobStatus, reported *kubeflowv1.Progress, now time.Time, interval time.Duration) time.Duration {
	merged := progress.Merge(before.Progress, reported)
	if wait := stepWait(before, merged, now, interval); wait > 0 {
		return wait
	}
	p.status.Progress = merged
	return 0
}

// stepWait is how long the step news of merged waits, 0 for none.
func stepWait(before *kubeflowv1.JobStatus, merged *kubeflowv1.Progress, now time.Time, interval time.Duration) time.Duration {
	old, last := before.Progress, before.LastReconcileTime
	if old == nil || last == nil || equality.Semantic.DeepEqual(old, merged) {
		return 0
	}
	if !equality.Semantic.DeepEqual(old.CheckpointStep, merged.CheckpointStep) || !equality.Semantic.DeepEqual(old.CheckpointTime, merged.CheckpointTime) {
		return 0
	}
	wait := last.Add(interval).Sub(now)
	if wait > interval {
		// The last write is in this clock's future (a leader whose clock
		// is behind the last one's): waiting on it could take long.
		return 0
	}
	return max(wait, 0)
}

// settleProgress finishes what takeProgress began, once the pass has
// decided the rest of the status: a step held back goes in after all when
// the pass writes the status anyway; otherwise the pass comes back when it
// may be written (stepsHeld), and reports of steps alone until then need
// not wake the controller (progress.Store.HoldUntil).
func (p *plan) settleProgress(before *kubeflowv1.JobStatus, reported *kubeflowv1.Progress, held time.Duration) {
	if held <= 0 {
		return
	}
	if statusEqual(*before, p.status) {
		p.stepsHeld = held
		p.requeueAt(held)
		return
	}
	p.status.Progress = progress.Merge(p.status.Progress, reported)
}
