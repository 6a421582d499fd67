package tide

import (
	"math"
	"sort"
	"time"
)

// Returns lists the loans that must end within the forecast, in order of
// deadline. Where the need rises into lent GPUs, it stops just enough
// loans: the fewest GPUs that cover the rise, and among those the least
// work at risk (work since the last checkpoint at the notice, times the
// GPUs). A loan already noticed keeps its deadline. When online already
// needs more than the loans leave (an unplanned spike), the deadline is
// now: the scheduler's preemption takes the GPUs, and the return is late.
func Returns(now time.Time, p Pool, s Settings) []Return {
	pl := newPlan(now, p, s)
	pl.loans = append([]Loan(nil), p.Loans...)
	for _, t := range pl.times() {
		over := pl.need.At(t) + pl.held(t) - pl.capacity
		if over <= 0 {
			continue
		}
		for _, i := range pl.choose(t, over) {
			pl.loans[i].Deadline = t
		}
	}
	var out []Return
	for i, l := range pl.loans {
		if l.Deadline.IsZero() {
			continue
		}
		lead := s.NoticeLead(l.CheckpointTime)
		notice := l.Deadline.Add(-lead)
		r := Return{Job: l.Job, GPUs: l.GPUs, Notice: notice, Deadline: l.Deadline}
		if notice.Before(now) {
			r.Notice, r.Short = now, true
		}
		others := pl
		others.loans = append(append([]Loan(nil), pl.loans[:i]...), pl.loans[i+1:]...)
		r.NextLoan = others.nextLoan(l.Deadline, l.GPUs)
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Deadline.Before(out[j].Deadline) })
	return out
}

// choose picks loans not yet returning whose GPUs cover over: the fewest
// GPUs, then the least work at risk, then by job name; all of them when
// they cannot cover it.
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
	// risk[g]: least work at risk of a set of exactly g GPUs; pick[k][g]
	// whether candidate k is in that set.
	risk := make([]float64, total+1)
	for g := 1; g <= total; g++ {
		risk[g] = math.Inf(1)
	}
	pick := make([][]bool, len(cand))
	for k, i := range cand {
		l := pl.loans[i]
		w := pl.atRisk(l, t.Add(-pl.s.NoticeLead(l.CheckpointTime)))
		pick[k] = make([]bool, total+1)
		for g := total; g >= l.GPUs; g-- {
			if r := risk[g-l.GPUs] + w; r < risk[g] {
				risk[g], pick[k][g] = r, true
			}
		}
	}
	g := over
	for math.IsInf(risk[g], 1) {
		g++
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
