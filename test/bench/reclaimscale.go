package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	backfillmanager "github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// reclaimPhase is one part of the reclaim-scale run.
type reclaimPhase struct {
	name    string
	run     window
	records []syncRecord
	syncs   float64
	writes  float64
	queries int
}

// reclaimResult is what the reclaim-scale run measured.
type reclaimResult struct {
	nodes, onlinePods int
	leaseSeconds      int // of the nodes' Leases
	seed              int64
	managerArgs       []string
	settings          reclaim.Settings
	queryCount        int // queries of one sync
	setup             time.Duration
	phases            []reclaimPhase // start-up, ramp and, once every node reached its target, steady
	whole             reclaimPhase
	final             reclaimState
	usage             usage
	queries           queryCounts
	runningJobs       int           // TFJobs created running before the manager started
	runningSetup      time.Duration // how long creating them took
	agents            *agentsResult // with -agents
	problems          []string
}

// runReclaimScale measures the reclaim controller on many nodes: kwok
// nodes carrying online pods that request 60–75 % of them and use a third
// of that, a fake Prometheus reporting the use, and the manager deciding
// every node's reclaimed capacity for -reclaim-duration.
func runReclaimScale(ctx context.Context, c *cluster, cfg config) (res *reclaimResult, err error) {
	env, err := startReclaimEnv(ctx, c, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if stopErr := env.stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	flags := slices.Concat(env.managerFlags(), extraManagerFlags(cfg.managerFlags))
	var runningSetup time.Duration
	if cfg.runningJobs > 0 {
		if runningSetup, err = createRunningJobs(ctx, c, cfg, flags, env.nodes, cfg.runningJobs); err != nil {
			return nil, err
		}
	}
	if res, err = env.measure(ctx, c, cfg, flags); err != nil {
		return nil, err
	}
	res.runningJobs, res.runningSetup, res.leaseSeconds = cfg.runningJobs, runningSetup, cfg.nodeLeaseSeconds
	if res.agents != nil {
		res.problems = append(res.problems, agentProblems(res.agents, cfg.runningJobs)...)
	}
	return res, nil
}

// reclaimEnv is the cluster of the reclaim-scale run: kwok nodes with
// online pods on them, and a fake Prometheus reporting their use.
type reclaimEnv struct {
	nodes      []string
	onlinePods int
	seed       int64
	// settings are the manager's, which the fake's queries depend on.
	settings reclaim.Settings
	prom     *fakePrometheus
	stopKwok func() error
	setup    time.Duration
}

// startReclaimEnv creates cfg.nodes kwok nodes and their online pods and
// starts the fake Prometheus for the reclaim settings of -manager-flags.
func startReclaimEnv(ctx context.Context, c *cluster, cfg config) (env *reclaimEnv, err error) {
	settings, rateWindow, err := managerReclaimSettings(extraManagerFlags(cfg.managerFlags))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	fmt.Printf("reclaim: creating %d kwok nodes\n", cfg.nodes)
	nodes, stopKwok, err := createNodes(ctx, c, cfg.nodes, cfg.nodeLeaseSeconds)
	if err != nil {
		return nil, err
	}
	env = &reclaimEnv{nodes: nodes, seed: cfg.seed, settings: settings, stopKwok: stopKwok}
	defer func() {
		if err != nil {
			_ = env.stop()
		}
	}()
	plan := planOnline(cfg.seed, nodes)
	env.onlinePods = len(plan.pods)
	fmt.Printf("reclaim: creating and binding %d online pods\n", len(plan.pods))
	if err := createOnline(ctx, c, plan, cfg.concurrency); err != nil {
		return nil, err
	}
	if env.prom, err = startFakePrometheus(&usageModel{seed: cfg.seed, start: time.Now(), requests: plan.requests}, settings, rateWindow); err != nil {
		return nil, err
	}
	env.setup = time.Since(start)
	fmt.Printf("reclaim: set up in %s\n", env.setup.Round(time.Second))
	return env, nil
}

// managerFlags point a manager at the fake Prometheus.
func (e *reclaimEnv) managerFlags() []string {
	return []string{"--reclaim-usage-source=prometheus", "--prometheus-url=" + e.prom.url}
}

// stop stops the fake Prometheus and kwok; the nodes and pods stay.
func (e *reclaimEnv) stop() error {
	var errs []error
	if e.prom != nil {
		errs = append(errs, e.prom.stop())
	}
	if e.stopKwok != nil {
		errs = append(errs, e.stopKwok())
	}
	return errors.Join(errs...)
}

// measure starts a manager with flags (which must hold managerFlags),
// waits for its first reclaim sync, follows it for cfg.reclaimDuration
// and stops it.
func (e *reclaimEnv) measure(ctx context.Context, c *cluster, cfg config, flags []string) (*reclaimResult, error) {
	res := &reclaimResult{nodes: len(e.nodes), onlinePods: e.onlinePods, seed: e.seed, settings: e.settings, setup: e.setup}
	before, err := takeMark(ctx, c, nil)
	if err != nil {
		return nil, err
	}
	queriesBefore := e.prom.counts()
	fmt.Println("reclaim: starting backfill manager with the fake Prometheus")
	m, err := startManager(ctx, c, cfg.backfill, "manager-reclaim", flags)
	if err != nil {
		return nil, err
	}
	defer func() { _ = m.stop() }()
	res.managerArgs = m.args

	capacity := reclaim.Resources{MilliCPU: nodeCPU.MilliValue(), Memory: nodeMemory.Value()}
	t := &syncTracker{c: c, m: m, prom: e.prom, nodes: e.nodes, tolerance: capacity.Percent(e.settings.MinChange, e.settings.MinChange)}
	tctx, stopTracker := context.WithCancel(ctx)
	tracked := make(chan struct{})
	go func() { defer close(tracked); t.run(tctx, queriesBefore.total) }()
	defer stopTracker()
	first, err := t.waitFirst(ctx, 5*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("%w; see %s", err, m.proc.LogPath())
	}
	fmt.Printf("reclaim: first sync done; following the manager for %s\n", cfg.reclaimDuration)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-m.proc.Done():
		return nil, fmt.Errorf("the manager exited: %w; see %s", m.proc.Wait(), m.proc.LogPath())
	case <-time.After(cfg.reclaimDuration):
	}
	if cfg.agents > 0 {
		if res.agents, err = e.measureAgents(ctx, c, cfg, m, t); err != nil {
			return nil, err
		}
	}
	stopTracker()
	<-tracked
	if t.err != nil {
		return nil, t.err
	}
	end, err := takeMark(ctx, c, m)
	if err != nil {
		return nil, err
	}
	if res.final, err = m.scrapeReclaim(ctx, e.nodes, t.tolerance); err != nil {
		return nil, err
	}
	res.usage, res.queries, res.queryCount = end.usage, e.prom.counts().since(queriesBefore), len(e.prom.names)
	res.phases, res.whole = splitPhases(t, before, first, end, res.final, res.queries.total)
	res.problems = reclaimProblems(res)
	return res, m.stop()
}

// managerReclaimSettings are the reclaim settings and Prometheus rate
// window the manager runs with: its defaults and the -manager-flags that
// change them. The fake Prometheus needs them to know the queries' text.
func managerReclaimSettings(managerFlags []string) (reclaim.Settings, time.Duration, error) {
	o := backfillmanager.DefaultOptions()
	s := &o.ReclaimSettings
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.DurationVar(&o.PrometheusRateWindow, "prometheus-rate-window", o.PrometheusRateWindow, "")
	fs.DurationVar(&s.Window, "reclaim-window", s.Window, "")
	fs.DurationVar(&s.CPUEvictionDelay, "reclaim-cpu-eviction-delay", s.CPUEvictionDelay, "")
	fs.DurationVar(&s.Interval, "reclaim-interval", s.Interval, "")
	fs.IntVar(&s.GrowthPerMinute, "reclaim-growth-per-minute", s.GrowthPerMinute, "")
	fs.IntVar(&s.MinChange, "reclaim-min-change", s.MinChange, "")
	fs.DurationVar(&s.OnlineWindow, "reclaim-online-window", s.OnlineWindow, "")
	if err := fs.Parse(managerFlags); err != nil {
		return reclaim.Settings{}, 0, fmt.Errorf("-manager-flags: %w", err)
	}
	return *s, o.PrometheusRateWindow, nil
}

// splitPhases cuts the run at the first sync and at the end of the ramp.
// The last phase gets what no record covers (a sync that ended after the
// tracker stopped).
func splitPhases(t *syncTracker, before, first, end mark, final reclaimState, queries int) (phases []reclaimPhase, whole reclaimPhase) {
	t.mu.Lock()
	defer t.mu.Unlock()
	records, rampEnd, rampIdx := t.records, t.rampEnd, t.rampIdx
	phase := func(name string, from, to mark, rs []syncRecord) reclaimPhase {
		p := reclaimPhase{name: name, run: from.until(to), records: rs}
		for _, r := range rs {
			p.syncs, p.writes, p.queries = p.syncs+r.syncs, p.writes+r.writes, p.queries+r.queries
		}
		return p
	}
	phases = append(phases, phase("start-up + 1st sync", before, first, records[:1]))
	if rampEnd == nil {
		phases = append(phases, phase("ramp (not ended)", first, end, records[1:]))
	} else {
		phases = append(phases, phase("ramp", first, *rampEnd, records[1:rampIdx+1]))
		phases = append(phases, phase("steady", *rampEnd, end, records[rampIdx+1:]))
	}
	whole = phase("whole run", before, end, records)
	last := &phases[len(phases)-1]
	last.syncs += final.syncs - whole.syncs
	last.writes += final.writes - whole.writes
	last.queries += queries - whole.queries
	whole.syncs, whole.writes, whole.queries = final.syncs, final.writes, queries
	return phases, whole
}

// err is the broken invariants as one error, or nil.
func (r *reclaimResult) err() error {
	if len(r.problems) == 0 {
		return nil
	}
	return fmt.Errorf("reclaim-scale: %d invariant(s) broken: %s", len(r.problems), strings.Join(r.problems, "; "))
}

// reclaimProblems are the invariants the run broke; timing is never one.
func reclaimProblems(r *reclaimResult) []string {
	var out []string
	if r.whole.syncs < 2 {
		out = append(out, fmt.Sprintf("the manager made %.0f reclaim syncs, none after the first", r.whole.syncs))
	}
	for _, p := range append(r.phases, r.whole) {
		// One sync more: the last may have queried and not ended.
		if p.syncs > 0 && float64(p.queries) > (p.syncs+1)*float64(r.queryCount) {
			out = append(out, fmt.Sprintf("%s: %.1f Prometheus queries per sync, want %d (one per query of the source, whatever the node count)", p.name, float64(p.queries)/p.syncs, r.queryCount))
		}
	}
	if len(r.queries.unknown) > 0 {
		out = append(out, fmt.Sprintf("the fake Prometheus got %d queries it does not know, e.g. %q", len(r.queries.unknown), r.queries.unknown[0]))
	}
	if r.final.sourceUp != 1 {
		out = append(out, "backfill_reclaim_usage_source_up is not 1 at the end: the usage source failed")
	}
	for _, p := range r.phases {
		if p.name == "steady" && p.syncs > 0 && p.writes > p.syncs*float64(r.nodes) {
			out = append(out, fmt.Sprintf("steady: %.0f node writes in %.0f syncs of %d nodes, more than one per node per sync", p.writes, p.syncs, r.nodes))
		}
	}
	return out
}
