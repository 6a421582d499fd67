package main

import (
	"math"
	"slices"
	"time"
)

// latencyStats are the online latencies of one measured window.
type latencyStats struct {
	requests, failed int
	p50, p99, p999   time.Duration
}

// summarize takes the requests sent in [from, to); failed requests count
// with the time they took to fail.
func summarize(samples []sample, from, to time.Time) latencyStats {
	var lat []time.Duration
	var s latencyStats
	for _, x := range samples {
		if x.start.Before(from) || !x.start.Before(to) {
			continue
		}
		lat = append(lat, x.latency)
		if x.failed {
			s.failed++
		}
	}
	slices.Sort(lat)
	s.requests = len(lat)
	s.p50, s.p99, s.p999 = quantile(lat, 0.50), quantile(lat, 0.99), quantile(lat, 0.999)
	return s
}

// quantile is the nearest-rank q-quantile of sorted latencies, 0 when
// there are none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// point is a value at a time relative to a reference (seconds).
type point struct{ t, v float64 }

// slidingP99 is the P99 of the requests sent in each window ending every
// step from from+window to to, in milliseconds, timed relative to ref.
// Windows without requests are left out.
func slidingP99(samples []sample, from, to, ref time.Time, window, step time.Duration) []point {
	byStart := slices.Clone(samples)
	slices.SortFunc(byStart, func(a, b sample) int { return a.start.Compare(b.start) })
	var out []point
	lo, hi := 0, 0
	buf := make([]time.Duration, 0, 1024)
	for end := from.Add(window); !end.After(to); end = end.Add(step) {
		begin := end.Add(-window)
		for lo < len(byStart) && byStart[lo].start.Before(begin) {
			lo++
		}
		for hi < len(byStart) && byStart[hi].start.Before(end) {
			hi++
		}
		if hi <= lo {
			continue
		}
		buf = buf[:0]
		for _, x := range byStart[lo:hi] {
			buf = append(buf, x.latency)
		}
		slices.Sort(buf)
		out = append(out, point{t: end.Sub(ref).Seconds(), v: ms(quantile(buf, 0.99))})
	}
	return out
}

// recovery is how P99 came back after a burst that began at t = 0: when
// the last 1 s window over bound (ms) ended, so that every later window of
// the burst stayed within it (0 when none was over), whether the burst's
// last window was within, and the share of the windows ending after
// grace that were over (of late windows).
type recovery struct {
	after     time.Duration
	recovered bool
	late      int
	overLate  float64
}

func recoveryOf(p99 []point, bound float64, grace time.Duration) recovery {
	var r recovery
	var late, lateOver int
	lastOver := -1
	for i, p := range p99 {
		if p.t <= 0 {
			continue
		}
		over := p.v > bound
		if over {
			lastOver = i
		}
		if p.t > grace.Seconds() {
			late++
			if over {
				lateOver++
			}
		}
	}
	r.recovered = lastOver < len(p99)-1
	if lastOver >= 0 {
		r.after = time.Duration(p99[lastOver].t * float64(time.Second))
	}
	if r.late = late; late > 0 {
		r.overLate = float64(lateOver) / float64(late)
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
