package gpuloan

import (
	"time"
)

// intervals learns how often each lent job checkpoints on its own: the gap
// between the last two checkpoints it reported while it ran on one loan,
// not told to return. A return then counts the work at risk from the last
// checkpoint projected on by that interval (least work lost first), and a
// paused job resumes only on a loan long enough to reach its next
// checkpoint. A notice writes what was learnt into the job's loan state, so
// that it outlives the manager.
type intervals struct {
	jobs map[string]learnt
}

// learnt is what one job's checkpoints taught.
type learnt struct {
	// last is the last checkpoint seen; interval the gap before it, 0
	// until two were seen.
	last     time.Time
	interval time.Duration
}

func newIntervals() *intervals { return &intervals{jobs: map[string]learnt{}} }

// observe reads the checkpoints of the jobs on loan, and forgets the jobs
// on loan no more.
func (iv *intervals) observe(cl *cluster) {
	seen := map[string]bool{}
	for _, byJob := range cl.loans {
		for key, l := range byJob {
			seen[key] = true
			if l.job == nil || l.state.Phase == PhaseReturning {
				continue // a notice's checkpoint is no interval
			}
			p := l.job.Status.Progress
			if p == nil || p.CheckpointTime == nil {
				continue
			}
			at := p.CheckpointTime.Time
			rec := iv.jobs[key]
			if !rec.last.IsZero() && at.After(rec.last) && !rec.last.Before(l.started) {
				rec.interval = at.Sub(rec.last)
			}
			rec.last = at
			iv.jobs[key] = rec
		}
	}
	for key := range iv.jobs {
		if !seen[key] {
			delete(iv.jobs, key)
		}
	}
}

// of is a job's interval: learnt on its current loan, else as its loan
// state kept it; 0 when unknown.
func (iv *intervals) of(key string, s LoanState) time.Duration {
	if d := iv.jobs[key].interval; d > 0 {
		return d
	}
	return s.checkpointInterval()
}
