package main

import (
	"math"
	"time"

	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// analysis is the whole run, per level and condition, as medians over
// rounds with their intervals.
type analysis struct {
	rounds       int
	offlineAlone calibration.Interval // GFLOP/s
	levels       []levelResult
}

type levelResult struct {
	lvl *level
	// online and idle are the node's CPU share online alone used and
	// left idle; requests per steady window.
	online, idle calibration.Interval
	requests     int
	conds        []condResult
}

// condResult is one condition over the rounds. Ratios divide by the same
// round's reference (online alone, or the burst alone).
type condResult struct {
	cond                  condition
	p99, p999, serverP99  calibration.Interval
	afterBurst, recovery  calibration.Interval
	online, fill, speed   calibration.Interval
	engaged, ceiling      float64
	p50ms, p99ms, p999ms  float64
	serverP99ms           float64
	waitUS, cpuUS         float64 // per request: online threads' run-queue wait and CPU
	migrations, preempted float64 // per request
	pressure, estimate    float64 // s/s: PSI "some" and its v1 estimate
	offlineCores          float64
	// p99Series is the 1 s P99 of a burst in the round whose ratio is
	// the median's, for the plot.
	p99Series []point
}

func (b *bench) analyse(rounds []round) *analysis {
	a := &analysis{rounds: len(rounds)}
	a.offlineAlone = interval(collect(rounds, func(r round) float64 { return r.offlineAlone.gflops }))
	for i, lvl := range b.levels {
		lr := levelResult{lvl: lvl}
		at := func(r round, key string) *windowResult { return r.levels[i][key] }
		lr.online = interval(collect(rounds, func(r round) float64 { return at(r, keyAlone).online / float64(b.cpus) }))
		lr.idle = interval(collect(rounds, func(r round) float64 { return at(r, keyAlone).idle / float64(b.cpus) }))
		lr.requests = rounds[0].levels[i][keyAlone].client.requests
		for _, c := range lvl.conds {
			lr.conds = append(lr.conds, b.analyseCondition(rounds, c, func(r round) (cur, ref, alone *windowResult) {
				return at(r, c.key), at(r, c.reference()), at(r, keyAlone)
			}))
		}
		a.levels = append(a.levels, lr)
	}
	return a
}

// analyseCondition gathers a condition's figures over the rounds.
func (b *bench) analyseCondition(rounds []round, c condition, pick func(round) (cur, ref, alone *windowResult)) condResult {
	res := condResult{cond: c}
	ratio := func(f func(*windowResult) time.Duration) calibration.Interval {
		return interval(collect(rounds, func(r round) float64 {
			cur, ref, _ := pick(r)
			return float64(f(cur)) / float64(f(ref))
		}))
	}
	res.p99 = ratio(func(w *windowResult) time.Duration { return w.client.p99 })
	res.p999 = ratio(func(w *windowResult) time.Duration { return w.client.p999 })
	res.serverP99 = ratio(func(w *windowResult) time.Duration { return w.server.p99 })
	if c.burst {
		res.afterBurst = ratio(func(w *windowResult) time.Duration { return w.afterBurst.p99 })
		res.recovery = interval(collect(rounds, func(r round) float64 {
			cur, ref, _ := pick(r)
			after, ok := recoveredAfter(cur.p99, targetBurstRatio*ms(ref.afterBurst.p99))
			if !ok {
				return b.cfg.burst.Seconds()
			}
			return after.Seconds()
		}))
		res.p99Series = medianRound(rounds, res.p99.Median, func(r round) (float64, []point) {
			cur, ref, _ := pick(r)
			return float64(cur.client.p99) / float64(ref.client.p99), cur.p99
		})
	}
	cpus := float64(b.cpus)
	res.online = interval(collect(rounds, func(r round) float64 { cur, _, _ := pick(r); return cur.online / cpus }))
	if c.offline {
		res.fill = interval(collect(rounds, func(r round) float64 {
			cur, _, alone := pick(r)
			if c.burst {
				_, ref, _ := pick(r)
				alone = ref
			}
			return cur.offline / alone.idle
		}))
		res.speed = interval(collect(rounds, func(r round) float64 { cur, _, _ := pick(r); return cur.gflops / r.offlineAlone.gflops }))
	}
	med := func(f func(*windowResult) float64) float64 {
		return median(finite(collect(rounds, func(r round) float64 { cur, _, _ := pick(r); return f(cur) })))
	}
	perReq := func(w *windowResult) float64 { return float64(max(w.client.requests, 1)) }
	res.engaged = med(func(w *windowResult) float64 { return w.engaged })
	res.ceiling = med(func(w *windowResult) float64 { return w.ceiling })
	res.offlineCores = med(func(w *windowResult) float64 { return w.offline })
	res.p50ms = med(func(w *windowResult) float64 { return ms(w.client.p50) })
	res.p99ms = med(func(w *windowResult) float64 { return ms(w.client.p99) })
	res.p999ms = med(func(w *windowResult) float64 { return ms(w.client.p999) })
	res.serverP99ms = med(func(w *windowResult) float64 { return ms(w.server.p99) })
	res.waitUS = med(func(w *windowResult) float64 { return float64(w.threads.wait.Microseconds()) / perReq(w) })
	res.cpuUS = med(func(w *windowResult) float64 { return w.online * w.elapsed.Seconds() * 1e6 / perReq(w) })
	res.migrations = med(func(w *windowResult) float64 { return float64(w.threads.migrations) / perReq(w) })
	res.preempted = med(func(w *windowResult) float64 { return float64(w.threads.preempted) / perReq(w) })
	res.pressure = med(func(w *windowResult) float64 { return w.pressure })
	res.estimate = med(func(w *windowResult) float64 { return w.someEstimate })
	return res
}

// collect is f of every round.
func collect(rounds []round, f func(round) float64) []float64 {
	out := make([]float64, len(rounds))
	for i, r := range rounds {
		out[i] = f(r)
	}
	return out
}

// medianRound is the series of the round whose value is closest to the
// median.
func medianRound(rounds []round, m float64, f func(round) (float64, []point)) []point {
	best, dist := []point(nil), math.Inf(1)
	for _, r := range rounds {
		v, s := f(r)
		if d := math.Abs(v - m); d < dist {
			best, dist = s, d
		}
	}
	return best
}
