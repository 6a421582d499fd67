package main

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// windowResult is what one window measured.
type windowResult struct {
	cond   condition
	client latencyStats // from each request's due time
	server latencyStats // from reading the request to its last byte
	// cores used over the window: the online and offline pods, the load
	// generator and the bench, interrupts, and the rest of the node.
	online, offline, loadgen, bench, irq, outside, steal, idle float64
	elapsed                                                    time.Duration
	gflops                                                     float64
	threads                                                    threadDelta
	// pressure is the online pod's CPU pressure "some" in s/s (NaN where
	// no v2 hierarchy gives it); someEstimate the v1 estimate of the same
	// from the threads' run-queue waits, each second's sum capped at the
	// second.
	pressure, someEstimate float64
	// engaged is the share of seconds the agent's ceiling applied, and
	// ceiling its mean in cores when it did.
	engaged, ceiling float64
	// afterBurst are the client latencies of the requests due from 5 s
	// after a burst's start; p99 the sliding 1 s P99 (ms) from its start.
	afterBurst latencyStats
	p99        []point
}

// plan is the load of a window: settle time (and a burst's lead-in)
// before the measured window.
func (b *bench) plan(lvl *level, c condition) (loadPlan, time.Duration) {
	pre := b.cfg.settle
	window := lvl.window
	if c.burst {
		pre += b.cfg.leadIn
		window = b.cfg.burst
		return loadPlan{base: lvl.rate, burst: lvl.burstRate, at: pre, length: pre + window}, pre
	}
	return loadPlan{base: lvl.rate, burst: lvl.rate, at: pre + window, length: pre + window}, pre
}

// measure runs one window of c at lvl: the training workload, the agent
// and the cores first, then the load for the settle time and the window.
func (b *bench) measure(ctx context.Context, lvl *level, c condition) (w *windowResult, err error) {
	undo, err := b.arrange(ctx, lvl, c)
	defer undo()
	if err != nil {
		return nil, err
	}
	var p loadPlan
	var pre time.Duration
	if lvl != nil {
		p, pre = b.plan(lvl, c)
	} else {
		pre = b.cfg.settle
		p = loadPlan{length: pre + b.cfg.offlineAlone}
	}
	start := time.Now().Add(300 * time.Millisecond)
	from, to := start.Add(pre), start.Add(p.length)
	var load *workload
	if p.base > 0 {
		if load, err = b.start("load generator", []string{loadGroup}, roleLoad, "-addr", b.addr,
			"-rate", ftoa(p.base), "-burst-rate", ftoa(p.burst), "-burst-at", p.at.String(), "-length", p.length.String(),
			"-start", strconv.FormatInt(start.UnixNano(), 10), "-connections", strconv.Itoa(b.cfg.connections)); err != nil {
			return nil, err
		}
		defer b.stop(load)
	}
	snaps, err := b.sample(ctx, from, to)
	if err != nil {
		return nil, err
	}
	w = b.figures(c, snaps)
	if load != nil {
		samples, err := readLoadSamples(load.lines, start)
		if err != nil {
			return nil, err
		}
		if err := b.serve.send("dump"); err != nil {
			return nil, err
		}
		served, err := readServerSamples(b.serve.lines, from, to)
		if err != nil {
			return nil, err
		}
		w.client, w.server = summarize(samples, from, to), summarize(served, from, to)
		if c.burst {
			w.afterBurst = summarize(samples, from.Add(recoveryGrace), to)
			w.p99 = slidingP99(samples, from, to, from, time.Second, 250*time.Millisecond)
		}
	}
	if t := b.train; t != nil && t.exited() {
		return nil, fmt.Errorf("the training workload exited (see its error above)")
	}
	return w, ctx.Err()
}

// recoveryGrace is how soon after a burst's start online latency should
// be back within the target of the burst alone.
const recoveryGrace = 5 * time.Second

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// arrange starts what c needs beside the online service; undo stops it
// and puts the cores back.
func (b *bench) arrange(ctx context.Context, lvl *level, c condition) (undo func(), err error) {
	var undos []func()
	undo = func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
	}
	l := b.layout
	if c.cores {
		offline, rest := coreSets(b.cpus, lvl.offlineCores)
		onlinePod := []string{l.online.group(), l.online.container()}
		offlinePod := []string{l.offline.group(), l.offline.container()}
		undos = append(undos, func() {
			for _, g := range [][]string{onlinePod, offlinePod} {
				if err := l.setCPUs(g, ""); err != nil {
					fmt.Printf("  putting the cores back: %v\n", err)
				}
			}
		})
		for _, s := range []struct {
			groups []string
			cpus   string
		}{{onlinePod, rest}, {offlinePod, offline}} {
			if err := l.setCPUs(s.groups, s.cpus); err != nil {
				return undo, err
			}
		}
	}
	if c.offline {
		t, err := b.start("training workload", []string{l.offline.container()}, roleTrain,
			"-matrix", strconv.Itoa(b.cfg.matrix), "-block", strconv.Itoa(b.cfg.block), "-threads", strconv.Itoa(b.cpus))
		if err != nil {
			return undo, err
		}
		b.train = t
		undos = append(undos, func() { b.stop(t); b.train = nil })
	}
	if c.agent != nil {
		a, err := startAgent(ctx, b, *c.agent)
		if err != nil {
			return undo, err
		}
		b.agent = a
		undos = append(undos, func() { a.stop(); b.agent = nil })
	}
	return undo, nil
}

// coreSets splits the node's CPUs: the last n for offline, the others for
// everything else, as cpuset lists.
func coreSets(cpus, n int) (offline, rest string) {
	span := func(lo, hi int) string {
		if lo == hi {
			return strconv.Itoa(lo)
		}
		return fmt.Sprintf("%d-%d", lo, hi)
	}
	return span(cpus-n, cpus-1), span(0, cpus-n-1)
}
