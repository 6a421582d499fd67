package main

import (
	"context"
	"fmt"
	"time"
)

// agentPhase is one of the three equal phases that follow the reclaim
// run's ramp when -agents is set: the manager alone, with the agents,
// and alone again once they stopped, so that a drift of the manager's
// own work over the run (its node writes follow the online usage) is not
// taken for the agents' cost.
type agentPhase struct {
	name    string
	run     window
	agents  requestCounts // the agents' own requests in it
	records []syncRecord
	syncs   float64
	writes  float64
	queries int
	rss     int64   // the manager's at the phase's end
	watches float64 // pod watches the apiserver served at the phase's end
	apiRSS  int64   // kube-apiserver's RSS at the phase's end
	scrapes int64   // the harness's reads of the manager's /metrics in it
}

// agentsResult is what the agents' part of the run measured.
type agentsResult struct {
	agents             int
	evictionsPerHour   float64 // per node
	alone, with, after agentPhase
	startUp            window // from the agents' start until all had listed their pods
	synced             time.Duration
	settled            time.Duration // then until two syncs had ended
	harnessRSS         int64         // the harness's, agents included, once they had listed their pods
	harnessRSSBefore   int64         // before the agents started
	watchesBefore      float64       // pod watches before the agents started
	evictions, failed  int64
	noCandidate        int64
	lastEvictionError  string
	runningJobsAtStart int // Running TFJobs when the manager-alone phase began
	runningJobsAtEnd   int
}

// cpuPerSecond is a process's CPU seconds a second in w.
func cpuPerSecond(w window, process string) float64 {
	if w.elapsed <= 0 {
		return 0
	}
	return w.plane[process] / w.elapsed.Seconds()
}

// aloneCPU is kube-apiserver's CPU a second without the agents: the mean
// of the phases before and after them.
func (a *agentsResult) aloneCPU() float64 {
	return (cpuPerSecond(a.alone.run, "kube-apiserver") + cpuPerSecond(a.after.run, "kube-apiserver")) / 2
}

// apiserverShare is the agents' share of kube-apiserver's CPU: (with −
// alone) / with, per second, alone the mean of the phases around theirs.
func (a *agentsResult) apiserverShare() float64 {
	with := cpuPerSecond(a.with.run, "kube-apiserver")
	if with == 0 {
		return 0
	}
	return (with - a.aloneCPU()) / with
}

// normalisedShare is the agents' share of kube-apiserver's CPU with the
// other requests' rate held equal: the phases without them give its CPU
// per request (the mean of the two); what the phase with them used above
// that per request of everyone else's is the agents'. The manager's node
// writes follow the online usage and move from phase to phase by more
// than the agents' whole cost, which the plain share takes for theirs.
func (a *agentsResult) normalisedShare() (perRequest, agentsCPU, share float64) {
	rate := func(p agentPhase, what requestCounts) float64 { return what.sum(all) / p.run.elapsed.Seconds() }
	alone := (cpuPerSecond(a.alone.run, "kube-apiserver")/rate(a.alone, a.alone.run.apiserver) +
		cpuPerSecond(a.after.run, "kube-apiserver")/rate(a.after, a.after.run.apiserver)) / 2
	with := cpuPerSecond(a.with.run, "kube-apiserver")
	others := rate(a.with, a.with.run.apiserver) - rate(a.with, a.with.agents)
	agentsCPU = with - alone*others
	if with == 0 {
		return alone, agentsCPU, 0
	}
	return alone, agentsCPU, agentsCPU / with
}

// measureAgents runs the three phases with the manager m in steady
// state: cfg.agentPhase of the manager alone; cfg.agents agents are
// started on the first nodes and, once all have listed their pods,
// cfg.agentPhase with them; the agents are stopped and cfg.agentPhase of
// the manager alone again.
func (e *reclaimEnv) measureAgents(ctx context.Context, c *cluster, cfg config, m *manager, t *syncTracker) (*agentsResult, error) {
	n := min(cfg.agents, len(e.nodes))
	res := &agentsResult{agents: n, evictionsPerHour: cfg.agentEvictions}
	var err error
	if res.runningJobsAtStart, err = countRunningJobs(ctx, c); err != nil {
		return nil, err
	}
	phase := func(name string, agents *agentFleet) (agentPhase, error) {
		from, err := takeMark(ctx, c, m)
		if err != nil {
			return agentPhase{}, err
		}
		scrapesFrom := m.scrapes.Load()
		var agentsFrom requestCounts
		if agents != nil {
			agentsFrom = agents.count.snapshot()
		}
		fmt.Printf("reclaim: %s for %s\n", name, cfg.agentPhase)
		if err := waitOrExit(ctx, m, cfg.agentPhase); err != nil {
			return agentPhase{}, err
		}
		to, err := takeMark(ctx, c, m)
		if err != nil {
			return agentPhase{}, err
		}
		p := agentPhase{name: name, run: from.until(to), rss: to.usage.rss, agents: requestCounts{}, scrapes: m.scrapes.Load() - scrapesFrom}
		if agents != nil {
			p.agents = agents.count.snapshot().minus(agentsFrom)
		}
		p.apiRSS = childRSS("kube-apiserver")
		if p.watches, err = c.podWatches(ctx); err != nil {
			return agentPhase{}, err
		}
		p.records = t.between(from.at, to.at)
		for _, r := range p.records {
			p.syncs, p.writes, p.queries = p.syncs+r.syncs, p.writes+r.writes, p.queries+r.queries
		}
		return p, nil
	}
	if res.alone, err = phase("manager alone", nil); err != nil {
		return nil, err
	}
	if res.watchesBefore, err = c.podWatches(ctx); err != nil {
		return nil, err
	}
	fmt.Printf("reclaim: starting %d simulated node agents\n", n)
	res.harnessRSSBefore = selfRSS()
	before, err := takeMark(ctx, c, m)
	if err != nil {
		return nil, err
	}
	agents, err := startAgents(ctx, c, e.nodes[:n], cfg.agentEvictions)
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			agents.stop()
		}
	}()
	synced, err := takeMark(ctx, c, m)
	if err != nil {
		return nil, err
	}
	res.startUp, res.synced, res.harnessRSS = before.until(synced), agents.synced, agents.harnessRSS
	fmt.Printf("reclaim: %d agents listed their nodes' pods in %s\n", n, res.synced.Round(time.Millisecond))
	// A sync slowed by the agents' start, and the writes it held back,
	// belong to the start, not to the phase with them: wait for two
	// syncs to end first.
	settleFrom := time.Now()
	if err := t.waitSyncs(ctx, m, 2, 10*time.Minute); err != nil {
		return nil, err
	}
	res.settled = time.Since(settleFrom)
	if res.with, err = phase("manager + agents", agents); err != nil {
		return nil, err
	}
	res.evictions, res.failed, res.noCandidate = agents.evictions.Load(), agents.evictFailed.Load(), agents.noCandidate.Load()
	res.lastEvictionError = agents.lastError()
	agents.stop()
	stopped = true
	if res.after, err = phase("manager alone again", nil); err != nil {
		return nil, err
	}
	if res.runningJobsAtEnd, err = countRunningJobs(ctx, c); err != nil {
		return nil, err
	}
	return res, nil
}

// waitOrExit waits d, unless ctx ends or the manager exits first.
func waitOrExit(ctx context.Context, m *manager, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-m.proc.Done():
		return fmt.Errorf("the manager exited: %w; see %s", m.proc.Wait(), m.proc.LogPath())
	case <-time.After(d):
		return nil
	}
}

// between are the records taken after from and up to to.
func (t *syncTracker) between(from, to time.Time) []syncRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []syncRecord
	for _, r := range t.records {
		if r.at.After(from) && !r.at.After(to) {
			out = append(out, r)
		}
	}
	return out
}

// agentProblems are the agents' invariants the run broke: every agent's
// watch was established, the jobs ran, evictions (if asked for) happened.
func agentProblems(a *agentsResult, runningJobs int) []string {
	var out []string
	if rose := a.with.watches - a.watchesBefore; rose < float64(a.agents) {
		out = append(out, fmt.Sprintf("agents: the apiserver's pod watches rose by %.0f (%.0f to %.0f), want at least %d, one per agent",
			rose, a.watchesBefore, a.with.watches, a.agents))
	}
	if a.runningJobsAtStart < runningJobs {
		out = append(out, fmt.Sprintf("agents: %d of the %d TFJobs were Running when the phases began", a.runningJobsAtStart, runningJobs))
	}
	want := a.evictionsPerHour * float64(a.agents) * a.with.run.elapsed.Hours()
	if runningJobs > 0 && want >= 3 && a.evictions == 0 {
		out = append(out, fmt.Sprintf("agents: no eviction in the %s phase, about %.0f were due (%d failed, last: %s)", a.with.name, want, a.failed, a.lastEvictionError))
	}
	if a.failed > 0 {
		out = append(out, fmt.Sprintf("agents: %d evictions failed, the last with: %s", a.failed, a.lastEvictionError))
	}
	return out
}

// waitSyncs waits until n more reclaim syncs have been recorded.
func (t *syncTracker) waitSyncs(ctx context.Context, m *manager, n int, timeout time.Duration) error {
	t.mu.Lock()
	want := len(t.records) + n
	t.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for {
		t.mu.Lock()
		got, err := len(t.records), t.err
		t.mu.Unlock()
		switch {
		case err != nil:
			return err
		case got >= want:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("the manager ended %d reclaim syncs in %s, want %d", got+n-want, timeout, n)
		}
		if err := waitOrExit(ctx, m, 500*time.Millisecond); err != nil {
			return err
		}
	}
}
