package tide

import (
	"math"
	"sort"
	"time"
)

// Returns lists the loans that must end within the forecast, in order of
// deadline. Where the need rises into lent GPUs, it stops just enough
// loans (choose says which). The loans stopped for one step are told
// together, at the earliest of their notices (deadline minus checkpoint
// time, with margin and slack), so that a choice once told is whole. A loan
// already told keeps its deadline and holds its GPUs until then, as
// Lendable counts it, so that a rise before that deadline stops another
// loan; it is not stopped twice. When online already needs more than the
// loans leave (an unplanned spike), the deadline is now: the scheduler's
// preemption takes the GPUs, and the return is late.
func Returns(now time.Time, p Pool, s Settings) []Return {
	pl, notice := newPlan(now, p, s).withReturns()
	var out []Return
	for i, l := range pl.loans {
		if l.Deadline.IsZero() {
			continue
		}
		r := Return{Job: l.Job, GPUs: l.GPUs, Notice: pl.notice(l, l.Deadline), Deadline: l.Deadline}
		r.Short = r.Notice.Before(now)
		if n, ok := notice[i]; ok {
			r.Notice = n
		}
		if r.Notice.Before(now) {
			r.Notice = now
		}
		others := pl
		others.loans = append(append([]Loan(nil), pl.loans[:i]...), pl.loans[i+1:]...)
		r.NextLoan = others.nextLoan(l.Deadline, l.GPUs)
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Deadline.Before(out[j].Deadline) })
	return out
}

// withReturns is the plan with a deadline on every loan that must end
// within the forecast, and the notice of each loan chosen with others for
// a step (by its index).
func (pl plan) withReturns() (plan, map[int]time.Time) {
	pl.loans = append([]Loan(nil), pl.loans...)
	notice := map[int]time.Time{}
	for _, t := range pl.times() {
		over := pl.need.At(t) + pl.holding(t) - pl.capacity
		if over <= 0 {
			continue
		}
		chosen := pl.choose(t, over)
		first := t
		for _, i := range chosen {
			pl.loans[i].Deadline = t
			if n := pl.notice(pl.loans[i], t); n.Before(first) {
				first = n
			}
		}
		for _, i := range chosen {
			notice[i] = first
		}
	}
	return pl, notice
}

// holding is the GPUs loans hold at t that the need must leave room for.
// After now, every loan until its deadline (held; a loan chosen at t gets
// Deadline t and drops out). At now, a loan told to return, or stopping,
// is on its way out and counts as returned: online pods that wait now (a
// spike) are the scheduler's preemption's to serve, and stopping a second
// loan at once for GPUs the first frees would only lose its work.
func (pl plan) holding(t time.Time) int {
	if t.After(pl.now) {
		return pl.held(t)
	}
	total := 0
	for _, l := range pl.loans {
		if l.Deadline.IsZero() {
			total += l.GPUs
		}
	}
	return total
}

// choose picks loans not yet returning whose GPUs cover over at t, by the
// work each return loses:
//
//   - first, the fewest loans whose notice for t is already past (beyond
//     the slack): their checkpoint cannot finish, and the work since their
//     last checkpoint is lost;
//   - then the fewest GPUs, so that a step stops only what it needs;
//   - then the least GPU-time spent on the returns' checkpoints (notice
//     lead x GPUs): a loan told in time saves its work, and what its return
//     costs is its checkpoint. This depends on measured checkpoint times
//     only, not on the clock, so the choice holds from one evaluation to the
//     next and a set chosen is told whole;
//   - then the least work since the last checkpoint at the notice (x GPUs),
//     then the job's name.
//
// All of them when they cannot cover it.
func (pl plan) choose(t time.Time, over int) []int {
	var cand []int
	total := 0
	for i, l := range pl.loans {
		if l.Deadline.IsZero() {
			cand = append(cand, i)
			total += l.GPUs
		}
	}
	sort.SliceStable(cand, func(a, b int) bool { return pl.loans[cand[a]].Job < pl.loans[cand[b]].Job })
	if total <= over {
		return cand
	}
	// cost[g]: least cost of a set of exactly g GPUs; pick[k][g] whether
	// candidate k is in that set.
	cost := make([]float64, total+1)
	for g := 1; g <= total; g++ {
		cost[g] = math.Inf(1)
	}
	pick := make([][]bool, len(cand))
	for k, i := range cand {
		l := pl.loans[i]
		c := pl.returnCost(l, t)
		pick[k] = make([]bool, total+1)
		for g := total; g >= l.GPUs; g-- {
			if r := cost[g-l.GPUs] + c; r < cost[g] {
				cost[g], pick[k][g] = r, true
			}
		}
	}
	// The fewest late loans first, then the fewest GPUs.
	g := -1
	for k := over; k <= total; k++ {
		if !math.IsInf(cost[k], 1) && (g < 0 || math.Floor(cost[k]/tooLate) < math.Floor(cost[g]/tooLate)) {
			g = k
		}
	}
	var chosen []int
	for k := len(cand) - 1; k >= 0 && g > 0; k-- {
		if pick[k][g] {
			chosen = append(chosen, cand[k])
			g -= pl.loans[cand[k]].GPUs
		}
	}
	return chosen
}

// tooLate is added to the cost of a loan whose notice is past: more than
// any other cost (a year of a thousand GPUs, in GPU-seconds).
const tooLate = 1000 * 365 * 24 * 3600

// returnCost is what stopping a loan by t costs, in GPU-seconds: its
// checkpoint (notice lead x GPUs), or tooLate when its notice is past; a
// millionth of its work at risk breaks ties.
func (pl plan) returnCost(l Loan, t time.Time) float64 {
	notice := pl.notice(l, t)
	risk := pl.atRisk(l, notice)
	if notice.Add(pl.s.CheckpointSlack).Before(pl.now) {
		return tooLate + risk
	}
	return pl.s.NoticeLead(l.CheckpointTime).Seconds()*float64(l.GPUs) + risk/1e6
}

// notice is when a loan must be told to be back by t.
func (pl plan) notice(l Loan, t time.Time) time.Time {
	return t.Add(-pl.s.NoticeLead(l.CheckpointTime))
}

// atRisk is a loan's work since its last checkpoint at t, in GPU-seconds,
// its checkpoints projected on by its interval.
func (pl plan) atRisk(l Loan, t time.Time) float64 {
	last := l.LastCheckpoint
	if last.IsZero() {
		last = l.Started
	}
	if l.CheckpointInterval > 0 && t.After(last) {
		last = last.Add(t.Sub(last) / l.CheckpointInterval * l.CheckpointInterval)
	}
	if t.Before(last) {
		return 0
	}
	return t.Sub(last).Seconds() * float64(l.GPUs)
}
