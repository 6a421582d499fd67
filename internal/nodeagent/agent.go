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
	governor *Governor

	// ceiling is the offline ceiling in milli-cores (-1: none).
	ceiling int64
	// last is the previous tick's reading, to measure use over a tick.
	last *reading
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

// Tick is what the last tick measured and set, in cores; Ceiling is -1
// while none applies (Engaged false).
type Tick struct {
	At                                         time.Time
	Capacity, Online, Offline, System, Ceiling float64
	Engaged                                    bool
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
		evicting: map[types.UID]int64{}, waitsSeen: map[types.UID]time.Duration{}}
	if a.governor, err = NewGovernor(cfg.Settings, a.capacity); err != nil {
		return nil, err
	}
	if cfg.Registry != nil {
		a.metrics = newAgentMetrics()
		if err := a.metrics.register(cfg.Registry); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// SyncedPodSource is a PodSource that knows its node's pods only once it
// has listed them (Cluster): Run waits for it before its first tick.
type SyncedPodSource interface {
	PodSource
	// WaitForSync blocks until the node's pods are listed, and reports
	// whether they are; false when ctx ends first.
	WaitForSync(ctx context.Context) bool
}

// Run waits for its pod source to list the node's pods, then ticks every
// Settings.Interval until ctx ends, and then lifts the ceiling and the idle
// class of every reclaimed pod. A tick that fails is logged and the next
// one tries again: what it set before stays, which keeps online pods safe.
func (a *Agent) Run(ctx context.Context) error {
	if s, ok := a.cfg.Pods.(SyncedPodSource); ok && !s.WaitForSync(ctx) {
		return nil // ended before the first tick: nothing was set
	}
	t := time.NewTicker(a.cfg.Settings.Interval)
	defer t.Stop()
	for {
		if err := a.Tick(ctx); err != nil && ctx.Err() == nil {
			a.cfg.Log.Error(err, "Protecting online pods failed this tick; the ceilings set before stay")
		}
		select {
		case <-ctx.Done():
			return a.letGo()
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

// Tick measures the node once and makes every pod's cgroups what the
// measure asks for: the ceiling on reclaimed pods when it applies, the
// kubelet's quotas everywhere else.
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
		// Use is measured over a tick: the next one decides the ceiling.
		// Until then the reclaimed pods' quotas stay as they are, which
		// after a restart is the safer guess for online pods.
		return errors.Join(append(errs, a.reconcile(pods, want{measured: false, idle: a.cfg.Settings.CPUIdle}))...)
	}
	u := now.since(prev, a.capacity)
	var engaged bool
	a.ceiling, engaged = a.governor.Step(u.online(), u.system())
	errs = append(errs, a.reconcile(pods, want{measured: true, ceiling: a.ceiling, idle: a.cfg.Settings.CPUIdle}))
	a.record(now, prev, u, engaged)
	return errors.Join(errs...)
}

// letGo lifts the ceiling and the idle class of every pod of the node, as
// the agent leaves it.
func (a *Agent) letGo() error {
	if a.metrics != nil {
		a.metrics.ceiling.Set(-1)
	}
	// The context has ended; the pod source answers from what it listed.
	pods, err := a.cfg.Pods.Pods(context.Background())
	if err != nil {
		return fmt.Errorf("listing the node's pods to lift their ceilings: %w", err)
	}
	return a.reconcile(pods, want{measured: true, ceiling: -1, idle: false})
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
