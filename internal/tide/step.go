package tide

import (
	"sort"
	"time"
)

// Step is a level that holds from At until the next step: replicas of one
// workload, or GPUs of a pool, as the producer says.
type Step struct {
	At    time.Time
	Value int
}

// ReplicaForecast is a workload's replicas over time: a CronSchedule or a
// History.
type ReplicaForecast interface {
	// Steps returns the replicas over [from, to): the first step at from,
	// then one at every change.
	Steps(from, to time.Time) []Step
}

// Demand is a level over [From, To): Steps sorted by time, the first at
// From. Beyond To nothing is known.
type Demand struct {
	Steps    []Step
	From, To time.Time
}

// At returns the level at t: the last step at or before t; 0 before From.
func (d Demand) At(t time.Time) int {
	i := sort.Search(len(d.Steps), func(i int) bool { return d.Steps[i].At.After(t) })
	if i == 0 {
		return 0
	}
	return d.Steps[i-1].Value
}

// Max returns the highest level over [from, to).
func (d Demand) Max(from, to time.Time) int {
	highest := d.At(from)
	for _, s := range d.Steps {
		if s.At.After(from) && s.At.Before(to) && s.Value > highest {
			highest = s.Value
		}
	}
	return highest
}

// merged drops steps that repeat the level before them.
func merged(steps []Step) []Step {
	out := steps[:0:0]
	for _, s := range steps {
		if n := len(out); n > 0 && out[n-1].Value == s.Value {
			continue
		}
		if n := len(out); n > 0 && out[n-1].At.Equal(s.At) {
			out[n-1] = s
			continue
		}
		out = append(out, s)
	}
	return out
}

// lookAhead is the level at every t the highest over [t, t+ahead]: every
// rise moves ahead earlier, every fall stays where it is. The result covers
// [from, to); steps must cover [from, to+ahead).
func lookAhead(steps []Step, from, to time.Time, ahead time.Duration) []Step {
	d := Demand{Steps: steps, From: from, To: to.Add(ahead)}
	if ahead <= 0 {
		return clip(steps, from, to)
	}
	times := []time.Time{from}
	for _, s := range steps {
		for _, t := range []time.Time{s.At, s.At.Add(-ahead)} {
			if t.After(from) && t.Before(to) {
				times = append(times, t)
			}
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	out := make([]Step, 0, len(times))
	for _, t := range times {
		out = append(out, Step{At: t, Value: d.Max(t, t.Add(ahead).Add(time.Nanosecond))})
	}
	return merged(out)
}

// clip is steps over [from, to), the first at from.
func clip(steps []Step, from, to time.Time) []Step {
	d := Demand{Steps: steps}
	out := []Step{{At: from, Value: d.At(from)}}
	for _, s := range steps {
		if s.At.After(from) && s.At.Before(to) {
			out = append(out, s)
		}
	}
	return merged(out)
}
