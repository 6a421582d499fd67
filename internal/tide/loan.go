package tide

import (
	"fmt"
	"sort"
	"time"
)

// Loan is a training job running on lent GPUs of a pool.
type Loan struct {
	Job  string
	GPUs int
	// Started is when the loan began.
	Started time.Time
	// CheckpointTime is the job's measured checkpoint time; 0 until it
	// has reported one.
	CheckpointTime time.Duration
	// CheckpointInterval is how often the job checkpoints on its own; 0
	// when it only checkpoints when told to.
	CheckpointInterval time.Duration
	// LastCheckpoint is the job's last finished checkpoint; zero: none
	// since Started.
	LastCheckpoint time.Time
	// Deadline is set once the job has had its stop notice: its GPUs are
	// back by then.
	Deadline time.Time
}

// Pool is what the decisions need of one GPU pool at a time.
type Pool struct {
	// GPUs is the pool's capacity of its GPU resource.
	GPUs int
	// Demand is the online forecast (PoolDemand) from now.
	Demand Demand
	// OnlineInUse is the GPUs online pods hold or wait for now.
	OnlineInUse int
	// Loans are the jobs on lent GPUs.
	Loans []Loan
}

// Offer is how many GPUs may be lent now, and until when.
type Offer struct {
	GPUs int
	// Until is when the need takes the first of them back, or the end of
	// the forecast (then the loan lasts at least that long).
	Until time.Time
}

// Request is a training job asking for lent GPUs.
type Request struct {
	GPUs int
	// CheckpointTime as measured, 0: not yet (DefaultCheckpointTime
	// stands for it).
	CheckpointTime time.Duration
	// CheckpointInterval, 0: the job checkpoints only when told to.
	CheckpointInterval time.Duration
}

// Admission is whether a job may start on lent GPUs.
type Admission struct {
	OK bool
	// Until is when its loan would end, or the end of the forecast when
	// it lasts beyond (then at least that long); Notice when it would be
	// told, were the loan to end at Until.
	Until, Notice time.Time
	// Reason says why not, or what the loan is.
	Reason string
}

// Return is a loan that must end within the forecast.
type Return struct {
	Job  string
	GPUs int
	// Notice is when the job gets its stop notice: Deadline minus its
	// checkpoint time (with margin and slack), or now when that is past.
	Notice time.Time
	// Deadline is when online needs the GPUs: the job is stopped then
	// whether or not its checkpoint finished.
	Deadline time.Time
	// Short is true when the notice leaves the job less than its
	// checkpoint time.
	Short bool
	// NextLoan is when the job could borrow its GPUs again, zero if not
	// within the forecast ("next loan from ~22:10").
	NextLoan time.Time
}

// plan is the decisions' view of a pool at now: the need over the
// horizon and who holds what when.
type plan struct {
	now, end time.Time
	capacity int
	need     Demand
	loans    []Loan
	s        Settings
}

func newPlan(now time.Time, p Pool, s Settings) plan {
	end := p.Demand.To.Add(-s.Lead)
	if end.Before(now) {
		end = now
	}
	steps := lookAhead(p.Demand.Steps, now, end, s.Lead)
	if headroom := p.GPUs * s.RiseHeadroomPercent / 100; headroom > 0 {
		steps = withRiseHeadroom(steps, p.Demand, now, end, headroom, p.GPUs)
	}
	if len(steps) == 0 {
		steps = []Step{{At: now}}
	}
	// Online above the need for now (an unplanned spike, a late
	// scale-down) is taken to stay so: the GPUs it holds are not there for
	// the next rise either. Online rising into GPUs held back for a rise
	// is not: it is that rise, come early, as often as a spike.
	if excess := p.OnlineInUse - steps[0].Value; excess > 0 {
		raised := make([]Step, len(steps))
		for i, st := range steps {
			raised[i] = Step{At: st.At, Value: st.Value + excess}
		}
		steps = raised
	}
	return plan{now: now, end: end, capacity: p.GPUs, need: Demand{Steps: steps, From: now, To: end}, loans: p.Loans, s: s}
}

// withRiseHeadroom adds headroom GPUs to the need wherever a rise is
// expected but has not come by the forecast (need above demand), at most
// the pool's capacity: room for an unplanned spike that comes with it.
func withRiseHeadroom(need []Step, demand Demand, from, to time.Time, headroom, capacity int) []Step {
	times := []time.Time{from}
	for _, series := range [][]Step{need, demand.Steps} {
		for _, st := range series {
			if st.At.After(from) && st.At.Before(to) {
				times = append(times, st.At)
			}
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	ahead := Demand{Steps: need}
	out := make([]Step, 0, len(times))
	for _, t := range times {
		v := ahead.At(t)
		if v > demand.At(t) {
			v = min(v+headroom, max(capacity, v))
		}
		out = append(out, Step{At: t, Value: v})
	}
	return merged(out)
}

// held is the GPUs loans hold at t.
func (pl plan) held(t time.Time) int {
	total := 0
	for _, l := range pl.loans {
		if l.Deadline.IsZero() || t.Before(l.Deadline) {
			total += l.GPUs
		}
	}
	return total
}

// times are the moments over [now, end) where the need or the loans change.
func (pl plan) times() []time.Time {
	ts := []time.Time{pl.now}
	for _, s := range pl.need.Steps {
		if s.At.After(pl.now) && s.At.Before(pl.end) {
			ts = append(ts, s.At)
		}
	}
	for _, l := range pl.loans {
		if l.Deadline.After(pl.now) && l.Deadline.Before(pl.end) {
			ts = append(ts, l.Deadline)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	return ts
}

// free is the GPUs neither online nor loans take at t.
func (pl plan) free(t time.Time) int {
	return pl.capacity - pl.need.At(t) - pl.held(t)
}

// lastsUntil is when gpus more than the loans hold stop fitting, from
// after on: after itself when they do not fit then, end when they fit
// throughout.
func (pl plan) lastsUntil(after time.Time, gpus int) time.Time {
	if pl.free(after) < gpus {
		return after
	}
	for _, t := range pl.times() {
		if t.After(after) && pl.free(t) < gpus {
			return t
		}
	}
	return pl.end
}

// Lendable returns the GPUs free to lend at now and how long all of them
// stay free.
func Lendable(now time.Time, p Pool, s Settings) Offer {
	pl := newPlan(now, p, s)
	free := max(pl.free(now), 0)
	if free == 0 {
		return Offer{Until: now}
	}
	return Offer{GPUs: free, Until: pl.lastsUntil(now, free)}
}

// Admit says whether a job may start on lent GPUs at now: only if they are
// free and the loan lasts long enough for the job to reach a checkpoint
// (its interval, or MinLoan) and then write one before the deadline.
func Admit(now time.Time, p Pool, s Settings, r Request) Admission {
	if r.GPUs <= 0 {
		return Admission{Reason: fmt.Sprintf("asks %d GPUs; a loan is of 1 GPU or more", r.GPUs)}
	}
	pl := newPlan(now, p, s)
	if free := pl.free(now); free < r.GPUs {
		return Admission{Until: now, Notice: now, Reason: fmt.Sprintf("asks %d GPUs, %d free to lend", r.GPUs, max(free, 0))}
	}
	until := pl.lastsUntil(now, r.GPUs)
	lead := s.NoticeLead(r.CheckpointTime)
	work := r.CheckpointInterval
	if work <= 0 {
		work = s.MinLoan
	}
	notice := until.Add(-lead)
	if until.Sub(now) < work+lead {
		return Admission{Until: until, Notice: notice, Reason: fmt.Sprintf("loan until %s lasts %s, short of %s of work to a checkpoint and %s to write it",
			until.Format(time.RFC3339), until.Sub(now).Round(time.Second), work, lead)}
	}
	if until.Equal(pl.end) {
		return Admission{OK: true, Until: until, Notice: notice, Reason: fmt.Sprintf("%d GPUs lent beyond the forecast (until at least %s)", r.GPUs, until.Format(time.RFC3339))}
	}
	return Admission{OK: true, Until: until, Notice: notice, Reason: fmt.Sprintf("%d GPUs lent until %s, notice at %s", r.GPUs, until.Format(time.RFC3339), notice.Format(time.RFC3339))}
}

// NextLoan is the first time from after on when gpus GPUs beyond what the
// loans hold are free for long enough to be worth a loan (MinLoan and a
// default notice); zero if not within the forecast. A loan the forecast
// ends (Returns) holds its GPUs only until its deadline, told or not.
func NextLoan(now, after time.Time, p Pool, s Settings, gpus int) time.Time {
	pl, _ := newPlan(now, p, s).withReturns()
	return pl.nextLoan(after, gpus)
}

func (pl plan) nextLoan(after time.Time, gpus int) time.Time {
	span := pl.s.MinLoan + pl.s.NoticeLead(0)
	starts := []time.Time{after}
	for _, t := range pl.times() {
		if t.After(after) {
			starts = append(starts, t)
		}
	}
	for _, t := range starts {
		if pl.free(t) >= gpus && pl.lastsUntil(t, gpus).Sub(t) >= span {
			return t
		}
	}
	return time.Time{}
}
