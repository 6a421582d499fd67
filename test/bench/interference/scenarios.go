package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// scenario is one measured run: the online service under load (or not),
// beside an offline pod (or not), with the node agent (or not).
type scenario struct {
	name    string
	load    bool
	offline *pod
	agent   bool
	burst   bool
}

// result is what one scenario measured over its window: the steady
// measurement, or the burst.
type result struct {
	sc     scenario
	lat    latencyStats
	cores  cores
	gflops float64
	// Series for the plot, in seconds from the window's start (the
	// burst's start); the settle time and lead-in come before 0.
	p99     []point // online P99 over sliding 1 s windows, ms
	offline []point // offline cores, per second
	ceiling []point // the node agent's offline ceiling, cores
}

// results are the whole run's.
type results struct {
	offlineAlone result
	runs         []result
}

// baseline is online alone at steady load; burstAlone online alone during
// a burst.
func (r *results) baseline() result { return r.runs[0] }
func (r *results) burstAlone() result {
	return r.find(func(s scenario) bool { return s.burst && s.offline == nil })
}
func (r *results) find(f func(scenario) bool) result {
	if i := slices.IndexFunc(r.runs, func(x result) bool { return f(x.sc) }); i >= 0 {
		return r.runs[i]
	}
	return result{}
}

// bench is the run's state: what it made, so that it can undo it.
type bench struct {
	cfg        config
	cpus       int
	hier       hierarchies
	layout     *layout
	iterations int
	perHash    time.Duration
	serve      *workload
	url        string
	live       []*workload
}

func (b *bench) scenarios() []scenario {
	l, x := b.layout, "×"+strconv.Itoa(b.cfg.burstFactor)
	return []scenario{
		{name: "online alone (baseline)", load: true},
		{name: "offline at the same CPU weight as online", load: true, offline: l.sameWeight},
		{name: "offline BestEffort", load: true, offline: l.offline},
		{name: "offline BestEffort with the node agent", load: true, offline: l.offline, agent: true},
		{name: "online burst " + x + " alone (reference)", load: true, burst: true},
		{name: "online burst " + x + " beside offline BestEffort", load: true, offline: l.offline, burst: true},
		{name: "online burst " + x + " beside offline BestEffort with the node agent", load: true, offline: l.offline, agent: true, burst: true},
	}
}

// runAll starts the online service, measures the training workload alone,
// then every scenario in turn.
func (b *bench) runAll(ctx context.Context) (*results, error) {
	if err := b.startServe(ctx); err != nil {
		return nil, err
	}
	fmt.Printf("warming up the online service for %s\n", b.cfg.warmup)
	attack(ctx, b.url, stepPacer{base: float64(b.cfg.rate), burst: float64(b.cfg.rate), at: b.cfg.warmup}, b.cfg.warmup)
	res := &results{}
	var err error
	fmt.Printf("measuring: offline alone (%s)\n", b.cfg.offlineOnly)
	if res.offlineAlone, err = b.run(ctx, scenario{name: "offline alone", offline: b.layout.offline}); err != nil {
		return nil, err
	}
	for _, sc := range b.scenarios() {
		fmt.Printf("measuring: %s\n", sc.name)
		r, err := b.run(ctx, sc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
		res.runs = append(res.runs, r)
	}
	return res, nil
}

func (b *bench) startServe(ctx context.Context) error {
	w, err := b.start("online service", b.layout.online, roleServe, "-iterations", strconv.Itoa(b.iterations))
	if err != nil {
		return err
	}
	b.serve = w
	select {
	case addr := <-w.ready:
		b.url = "http://" + addr + "/"
		return nil
	case <-w.done:
		return fmt.Errorf("the online service exited before it listened (see its error above)")
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the online service did not listen within 10s")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *bench) start(name string, p *pod, role string, args ...string) (*workload, error) {
	w, err := startWorkload(b.layout, name, p.container(), role, args...)
	if err != nil {
		return nil, err
	}
	b.live = append(b.live, w)
	return w, nil
}

// stop ends one workload; stopAll every workload still running.
func (b *bench) stop(w *workload) {
	w.stop()
	b.live = slices.DeleteFunc(b.live, func(x *workload) bool { return x == w })
}

func (b *bench) stopAll() {
	for _, w := range slices.Clone(b.live) {
		b.stop(w)
	}
}

// run measures one scenario: the offline workload and the agent start
// first, the load runs for the settle time (and a burst's lead-in), then
// the measured window.
func (b *bench) run(ctx context.Context, sc scenario) (result, error) {
	r := result{sc: sc}
	var train *workload
	if sc.offline != nil {
		var err error
		train, err = b.start("training workload", sc.offline, roleTrain,
			"-matrix", strconv.Itoa(b.cfg.matrix), "-block", strconv.Itoa(b.cfg.block), "-threads", strconv.Itoa(b.cpus))
		if err != nil {
			return r, err
		}
		defer b.stop(train)
	}
	var agent *agentRun
	if sc.agent {
		var err error
		if agent, err = startAgent(ctx, b); err != nil {
			return r, err
		}
		defer agent.stop()
	}

	pre, measured, pacer := b.plan(sc)
	began := time.Now()
	from, to := began.Add(pre), began.Add(pre+measured)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	loaded := make(chan []sample, 1)
	if sc.load {
		go func() { loaded <- attack(lctx, b.url, pacer, pre+measured) }()
	} else {
		loaded <- nil
	}
	snaps, err := b.sample(ctx, sc.offline, train, agent, began, from, to)
	if err != nil {
		cancel()
		<-loaded
		return r, err
	}
	samples := <-loaded
	if err := ctx.Err(); err != nil {
		return r, fmt.Errorf("interrupted: %w", err)
	}
	if train != nil && train.exited() {
		return r, fmt.Errorf("the training workload exited (see its error above)")
	}

	r.lat = summarize(samples, from, to)
	r.cores = snaps.last.coresSince(snaps.first)
	r.gflops = snaps.last.flopRate(snaps.first)
	r.p99 = slidingP99(samples, began, to, from, time.Second, 100*time.Millisecond)
	r.offline, r.ceiling = snaps.offline, snaps.ceiling
	return r, nil
}

// plan is how long a scenario runs before its measured window, how long
// that window is, and the online load throughout.
func (b *bench) plan(sc scenario) (pre, measured time.Duration, pacer stepPacer) {
	rate := float64(b.cfg.rate)
	switch {
	case sc.burst:
		pre, measured = b.cfg.settle+b.cfg.leadIn, b.cfg.burst
		return pre, measured, stepPacer{base: rate, burst: rate * float64(b.cfg.burstFactor), at: pre}
	case !sc.load:
		return b.cfg.settle, b.cfg.offlineOnly, stepPacer{}
	default:
		pre, measured = b.cfg.settle, b.cfg.steady
		return pre, measured, stepPacer{base: rate, burst: rate, at: pre + measured}
	}
}

// snapshots are the CPU use at the measured window's ends, and per
// second for the plot.
type snapshots struct {
	first, last      usage
	offline, ceiling []point
}

// sample reads the CPU use every second from began to to, and exactly at
// from and to.
func (b *bench) sample(ctx context.Context, offline *pod, train *workload, agent *agentRun, began, from, to time.Time) (snapshots, error) {
	var s snapshots
	due := []time.Time{from, to}
	for t := began.Add(time.Second); t.Before(to); t = t.Add(time.Second) {
		due = append(due, t)
	}
	slices.SortFunc(due, func(a, b time.Time) int { return a.Compare(b) })
	due = slices.CompactFunc(due, func(a, b time.Time) bool { return a.Equal(b) })
	prev, err := b.measure(offline, train)
	if err != nil {
		return s, err
	}
	for _, t := range due {
		select {
		case <-ctx.Done():
			return s, nil
		case <-time.After(time.Until(t)):
		}
		u, err := b.measure(offline, train)
		if err != nil {
			return s, err
		}
		switch {
		case t.Equal(from):
			s.first = u
		case t.Equal(to):
			s.last = u
		}
		at := u.at.Sub(from).Seconds()
		if offline != nil && u.at.Sub(prev.at) > 500*time.Millisecond {
			s.offline = append(s.offline, point{t: at, v: u.coresSince(prev).offline})
			prev = u
		}
		if agent != nil {
			if q, ok := agent.ceiling(); ok {
				s.ceiling = append(s.ceiling, point{t: at, v: q})
			}
		}
	}
	return s, nil
}
