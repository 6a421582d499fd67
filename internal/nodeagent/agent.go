package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// Config is what an Agent works with.
type Config struct {
	FS       *nodefs.FS
	Pods     PodSource
	Settings Settings
	// Evictor evicts offline pods for memory; nil turns memory evictions
	// off (the interference benchmark has no cluster).
	Evictor Evictor
	// Registry gets the agent's metrics; nil exports none.
	Registry prometheus.Registerer
	Log      logr.Logger
}

// Agent protects online pods on one node; see the package doc.
type Agent struct {
	cfg      Config
	capacity int64 // milli-cores
	metrics  *agentMetrics
	waits    *nodefs.WaitMeter

	// ceiling is the offline ceiling in milli-cores (-1: none yet).
	ceiling int64
	// last is the previous tick's reading, to measure use over a tick.
	last *reading
	// capped are the pods whose cgroups carry a ceiling, to lift on exit.
	capped map[types.UID]Pod
	// evicting are the pods evicted for memory and not yet gone, with
	// what they used: released already, as far as the next tick goes.
	evicting map[types.UID]int64
	// noIdleTold: the log said once that the kernel has no cpu.idle.
	noIdleTold bool
	// waitsSeen are the online pods' CPU waits at the last tick.
	waitsSeen map[types.UID]time.Duration

	mu   sync.Mutex
	tick Tick
}

// Tick is what the last tick measured and set, in cores.
type Tick struct {
	At                                         time.Time
	Capacity, Online, Offline, System, Ceiling float64
}

// New makes an agent for the node of cfg.FS.
func New(cfg Config) (*Agent, error) {
	if err := cfg.Settings.Validate(); err != nil {
		return nil, err
	}
	cpus, err := cfg.FS.NodeCPUs()
	if err != nil {
		return nil, fmt.Errorf("counting the node's CPUs: %w", err)
	}
	a := &Agent{cfg: cfg, capacity: int64(cpus) * 1000, waits: cfg.FS.NewWaitMeter(), ceiling: -1,
		capped: map[types.UID]Pod{}, evicting: map[types.UID]int64{}, waitsSeen: map[types.UID]time.Duration{}}
	if cfg.Registry != nil {
		a.metrics = newAgentMetrics()
		if err := a.metrics.register(cfg.Registry); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Run ticks every Settings.Interval until ctx ends, then lifts every
// ceiling it set. A tick that fails is logged and the next one tries
// again: the ceilings it set before stay, which keeps online pods safe.
func (a *Agent) Run(ctx context.Context) error {
	t := time.NewTicker(a.cfg.Settings.Interval)
	defer t.Stop()
	for {
		if err := a.Tick(ctx); err != nil && ctx.Err() == nil {
			a.cfg.Log.Error(err, "Protecting online pods failed this tick; the ceilings set before stay")
		}
		select {
		case <-ctx.Done():
			return a.lift()
		case <-t.C:
		}
	}
}

// Last is what the last tick measured and set.
func (a *Agent) Last() Tick {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tick
}

// Tick measures the node once and caps its offline pods.
func (a *Agent) Tick(ctx context.Context) error {
	pods, err := a.cfg.Pods.Pods(ctx)
	if err != nil {
		return fmt.Errorf("listing the node's pods: %w", err)
	}
	now, err := a.read(pods)
	if err != nil {
		return err
	}
	prev := a.last
	a.last = now
	errs := []error{a.observeWaits(pods)}
	if a.cfg.Evictor != nil {
		errs = append(errs, a.relieveMemory(ctx, pods))
	}
	if prev == nil {
		return errors.Join(errs...) // use is measured over a tick: the next one caps
	}
	u := now.since(prev, a.capacity)
	if engaged(u, a.cfg.Settings) {
		a.ceiling = follow(a.ceiling, budget(u, a.cfg.Settings), a.capacity, a.cfg.Settings.CPUGrowth)
		errs = append(errs, a.capOffline(pods))
	} else {
		a.ceiling = -1
		errs = append(errs, a.lift())
	}
	a.record(now, prev, u)
	return errors.Join(errs...)
}

// capOffline shares the ceiling among the reclaimed pods and writes each
// one's part on its cgroup.
func (a *Agent) capOffline(pods []Pod) error {
	var claims []claim
	byUID := map[types.UID]Pod{}
	for _, p := range pods {
		if p.Reclaimed && a.cfg.FS.Exists(p.group(a.cfg.FS)) {
			claims = append(claims, claim{uid: p.UID, weight: p.Weight, limit: limitMilli(p.Limits.Pod)})
			byUID[p.UID] = p
		}
	}
	var errs []error
	for uid, milli := range share(a.ceiling, claims) {
		p := byUID[uid]
		if err := a.cfg.FS.SetPodCPUCeiling(p.group(a.cfg.FS), milli*cfsPeriod/1000, p.Limits); err != nil {
			errs = append(errs, fmt.Errorf("capping the CPU of offline pod %s/%s: %w", p.Namespace, p.Name, err))
			continue
		}
		a.capped[uid] = p
		errs = append(errs, a.idle(p, a.cfg.Settings.CPUIdle))
	}
	for uid := range a.capped {
		if _, ok := byUID[uid]; !ok {
			delete(a.capped, uid) // gone with its cgroup
		}
	}
	return errors.Join(errs...)
}

// lift puts every capped pod's kubelet quotas back.
func (a *Agent) lift() error {
	var errs []error
	for uid, p := range a.capped {
		err := errors.Join(a.cfg.FS.SetPodCPUCeiling(p.group(a.cfg.FS), -1, p.Limits), a.idle(p, false))
		if err != nil && a.cfg.FS.Exists(p.group(a.cfg.FS)) {
			errs = append(errs, fmt.Errorf("lifting the CPU ceiling of offline pod %s/%s: %w", p.Namespace, p.Name, err))
			continue
		}
		delete(a.capped, uid)
	}
	if a.metrics != nil {
		a.metrics.ceiling.Set(-1)
	}
	return errors.Join(errs...)
}

// idle puts a reclaimed pod in the scheduler's idle class or takes it out.
// A kernel without cpu.idle is told once; the ceiling still holds.
func (a *Agent) idle(p Pod, idle bool) error {
	err := a.cfg.FS.SetCPUIdle(p.group(a.cfg.FS), idle)
	switch {
	case errors.Is(err, nodefs.ErrNoCPUIdle):
		if !a.noIdleTold {
			a.cfg.Log.Info("Offline pods stay in the normal scheduling class: CPU weights and the ceiling alone protect online pods", "reason", err.Error())
			a.noIdleTold = true
		}
		return nil
	case err != nil:
		return fmt.Errorf("setting cpu.idle of offline pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// cfsPeriod is the kubelet's CFS period in µs (its --cpu-cfs-quota-period
// default), in which the agent writes ceilings.
const cfsPeriod = 100_000

// limitMilli is a quota of µs per cfsPeriod in milli-cores; 0 for none.
func limitMilli(quota int64) int64 {
	if quota <= 0 {
		return 0
	}
	return quota * 1000 / cfsPeriod
}
