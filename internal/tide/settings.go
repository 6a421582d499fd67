package tide

import (
	"fmt"
	"time"
)

// Settings are the loans' knobs.
type Settings struct {
	// Lead takes the forecast this much early: GPUs come back Lead before
	// the forecast needs them, since an autoscaler often scales up before
	// its schedule (KEDA's HPA reacting to load, an operator's manual
	// scale-up).
	Lead time.Duration
	// RiseHeadroomPercent of the pool's GPUs are held back on top of a
	// rise while it is expected (from Lead before it until the forecast's
	// time): an unplanned spike that comes into the GPUs held for the
	// rise would otherwise leave the rise short.
	RiseHeadroomPercent int
	// DefaultCheckpointTime stands for a job's checkpoint time until the
	// job has reported one.
	DefaultCheckpointTime time.Duration
	// CheckpointMarginPercent is added to a job's checkpoint time for its
	// notice: checkpoints do not all take as long as the last one.
	CheckpointMarginPercent int
	// CheckpointSlack is added to every notice on top: the time to deliver
	// it and for the job to begin its checkpoint.
	CheckpointSlack time.Duration
	// MinLoan is the shortest loan a job that checkpoints only when told
	// to (no interval) may start on, before its notice.
	MinLoan time.Duration
}

// DefaultSettings are a 30-minute lead, 10% of the pool held back with a
// rise, 10 minutes of checkpoint until measured, a 50% margin and a minute
// of slack on notices, and loans of at least 15 minutes.
func DefaultSettings() Settings {
	return Settings{
		Lead:                    30 * time.Minute,
		RiseHeadroomPercent:     10,
		DefaultCheckpointTime:   10 * time.Minute,
		CheckpointMarginPercent: 50,
		CheckpointSlack:         time.Minute,
		MinLoan:                 15 * time.Minute,
	}
}

// Validate says which setting is out of range.
func (s Settings) Validate() error {
	switch {
	case s.Lead < 0:
		return fmt.Errorf("lead %s is negative: give how early GPUs come back before the forecast, e.g. 30m", s.Lead)
	case s.DefaultCheckpointTime <= 0:
		return fmt.Errorf("default checkpoint time %s: must be positive, e.g. 10m", s.DefaultCheckpointTime)
	case s.RiseHeadroomPercent > 100:
		return fmt.Errorf("rise headroom %d%%: a share of the pool's GPUs, at most 100%%, e.g. 10", s.RiseHeadroomPercent)
	case s.CheckpointMarginPercent < 0 || s.CheckpointSlack < 0 || s.MinLoan < 0 || s.RiseHeadroomPercent < 0:
		return fmt.Errorf("checkpoint margin %d%%, slack %s, minimum loan %s, rise headroom %d%%: none may be negative",
			s.CheckpointMarginPercent, s.CheckpointSlack, s.MinLoan, s.RiseHeadroomPercent)
	}
	return nil
}

// NoticeLead is how long before its deadline a job with this checkpoint
// time (0: not measured yet) gets its stop notice.
func (s Settings) NoticeLead(checkpointTime time.Duration) time.Duration {
	if checkpointTime <= 0 {
		checkpointTime = s.DefaultCheckpointTime
	}
	return checkpointTime*time.Duration(100+s.CheckpointMarginPercent)/100 + s.CheckpointSlack
}
