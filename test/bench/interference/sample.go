package main

import (
	"context"
	"math"
	"time"
)

// samples are a window's snapshots at its ends, and what the seconds
// between them add up to.
type samples struct {
	first, last snapshot
	// someEstimate sums, per second, the online threads' run-queue waits
	// capped at the second: the v1 estimate of CPU pressure "some".
	someEstimate time.Duration
	// secs the agent ran, engaged those in which its ceiling applied, and
	// ceiling their sum of ceilings (cores).
	secs, engaged int
	ceiling       float64
	offline       []point // offline cores per second, from the window's start
}

// sample snapshots the node at from, every second after, and at to.
func (b *bench) sample(ctx context.Context, from, to time.Time) (samples, error) {
	var s samples
	if err := sleepUntil(ctx, from); err != nil {
		return s, err
	}
	first, err := b.take(b.train)
	if err != nil {
		return s, err
	}
	s.first, s.last = first, first
	for t := from.Add(time.Second); ; t = t.Add(time.Second) {
		t = minTime(t, to)
		if err := sleepUntil(ctx, t); err != nil {
			return s, err
		}
		cur, err := b.take(b.train)
		if err != nil {
			return s, err
		}
		s.add(s.last, cur, b.agent)
		s.last = cur
		if !t.Before(to) {
			return s, nil
		}
	}
}

// add accounts the second from prev to cur.
func (s *samples) add(prev, cur snapshot, agent *agentRun) {
	el := cur.at.Sub(prev.at)
	if el <= 0 {
		return
	}
	s.someEstimate += min(threadsSince(prev.threads, cur.threads).wait, el)
	s.offline = append(s.offline, point{t: cur.at.Sub(s.first.at).Seconds(), v: (cur.offline - prev.offline).Seconds() / el.Seconds()})
	if agent == nil {
		return
	}
	s.secs++
	if t := agent.agent.Last(); t.Engaged {
		s.engaged++
		s.ceiling += t.Ceiling
	}
}

// figures turns a window's samples into its figures, but for latency.
func (b *bench) figures(c condition, s samples) *windowResult {
	a, z := s.first, s.last
	el := z.at.Sub(a.at)
	secs := el.Seconds()
	per := func(d time.Duration) float64 { return d.Seconds() / secs }
	w := &windowResult{cond: c, elapsed: el,
		online: per(z.online - a.online), offline: per(z.offline - a.offline),
		loadgen: per(z.system - a.system), bench: per(z.bench - a.bench),
		irq: per(z.node.irq - a.node.irq), steal: per(z.node.steal - a.node.steal),
		idle:         per(z.node.idle - a.node.idle),
		threads:      threadsSince(a.threads, z.threads),
		pressure:     math.NaN(),
		someEstimate: per(s.someEstimate),
	}
	// Whatever the node did beyond the bench's own: /proc/stat counts in
	// ticks, the cgroups exactly, so small negatives are noise.
	w.outside = max(0, per(z.node.busy-a.node.busy)-per(z.pods-a.pods)-w.loadgen-w.bench)
	if a.hasPressure && z.hasPressure {
		w.pressure = per(z.pressure - a.pressure)
	}
	if s.secs > 0 {
		w.engaged = float64(s.engaged) / float64(s.secs)
	}
	if s.engaged > 0 {
		w.ceiling = s.ceiling / float64(s.engaged)
	}
	if z.flopAt.After(a.flopAt) && !a.flopAt.IsZero() {
		w.gflops = float64(z.flop-a.flop) / z.flopAt.Sub(a.flopAt).Seconds() / 1e9
	}
	return w
}

func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(t)):
		return nil
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
