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

// summarize takes the requests due (or read) in [from, to); failed
// requests count with the time they took to fail.
func summarize(samples []sample, from, to time.Time) latencyStats {
	var lat []time.Duration
	var s latencyStats
	for _, x := range samples {
		if x.due.Before(from) || !x.due.Before(to) {
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

// slidingP99 is the P99 of the requests due in each window ending every
// step from from+window to to, in milliseconds, timed relative to ref.
// Windows without requests are left out.
func slidingP99(samples []sample, from, to, ref time.Time, window, step time.Duration) []point {
	byDue := slices.Clone(samples)
	slices.SortFunc(byDue, func(a, b sample) int { return a.due.Compare(b.due) })
	var out []point
	lo, hi := 0, 0
	buf := make([]time.Duration, 0, 1024)
	for end := from.Add(window); !end.After(to); end = end.Add(step) {
		begin := end.Add(-window)
		for lo < len(byDue) && byDue[lo].due.Before(begin) {
			lo++
		}
		for hi < len(byDue) && byDue[hi].due.Before(end) {
			hi++
		}
		if hi <= lo {
			continue
		}
		buf = buf[:0]
		for _, x := range byDue[lo:hi] {
			buf = append(buf, x.latency)
		}
		slices.Sort(buf)
		out = append(out, point{t: end.Sub(ref).Seconds(), v: ms(quantile(buf, 0.99))})
	}
	return out
}

// recoveredAfter is when a burst's P99 came back for good: the end of
// the last 1 s window over bound (ms), 0 when none was; ok false when the
// burst's last window was still over.
func recoveredAfter(p99 []point, bound float64) (after time.Duration, ok bool) {
	last := -1
	for i, p := range p99 {
		if p.v > bound {
			last = i
		}
	}
	if last < 0 {
		return 0, true
	}
	return time.Duration(p99[last].t * float64(time.Second)), last < len(p99)-1
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
