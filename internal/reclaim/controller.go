package reclaim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// ControllerName names the controller in logs and events.
const ControllerName = "reclaim-controller"

// eventRecorder is the events API the controller emits to.
type eventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Controller decides, every Settings.Interval, each node's reclaimed
// capacity from the usage source, writes the nodes whose capacity changed
// and evicts what online pods need back. It runs on the leader only.
type Controller struct {
	client   client.Client
	view     *clusterview.View
	source   UsageSource
	settings Settings
	// notice is how long a victim is told before it is evicted, to save a
	// checkpoint (the operator's --stop-notice).
	notice   time.Duration
	recorder eventRecorder
	clock    clock.PassiveClock
	log      logr.Logger

	// known are the nodes of the last decision, to forget gone ones.
	known map[string]bool
	// warned are the pods whose job was told they can never fit.
	warned map[string]bool
	// signals read what online pods say of their service; nil: nothing
	// does, and no node is held back by it.
	signals *OnlineSignals
	// misdeclared are the workloads whose opt-in was logged as wrong.
	misdeclared map[string]bool

	// supply is what the last decision offered (Supply), read by the
	// TFJob controller's workers, which supplyChanges wake.
	mu            sync.Mutex
	supply        Supply
	supplyChanges chan event.TypedGenericEvent[Supply]
}

// NewController decides with settings from source, reading the cluster
// from view and writing through c; victims get notice before they are
// evicted.
func NewController(c client.Client, view *clusterview.View, source UsageSource, settings Settings, notice time.Duration, recorder eventRecorder, clk clock.PassiveClock, log logr.Logger) *Controller {
	return &Controller{client: c, view: view, source: source, settings: settings, notice: notice, recorder: recorder, clock: clk,
		log: log.WithName(ControllerName), known: map[string]bool{}, warned: map[string]bool{}, misdeclared: map[string]bool{},
		supplyChanges: make(chan event.TypedGenericEvent[Supply], 1)}
}

// ListenTo makes decisions hold back the nodes whose online pods suffer,
// as signals read them.
func (c *Controller) ListenTo(signals *OnlineSignals) { c.signals = signals }

// Start decides every interval until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.log.Info("Reclaiming the capacity online pods request but do not use", "usageSource", c.source.Name(),
		"cpuMargin", c.settings.Margin.CPU, "memoryMargin", c.settings.Margin.Memory, "window", c.settings.Window, "interval", c.settings.Interval)
	c.view.EverySynced(ctx, c.settings.Interval, c.Sync, c.log, "Deciding reclaimed capacity")
	return nil
}

// Sync makes one decision for every node.
func (c *Controller) Sync(ctx context.Context) error {
	start := c.clock.Now()
	defer func() { metrics.ReclaimSynced(c.clock.Since(start)) }()
	usage, usageErr := c.source.Usage(ctx, start)
	metrics.UsageSourceUp(c.source.Name(), usageErr == nil)
	if usageErr != nil {
		c.log.Error(usageErr, "Reading usage: every node's reclaimed capacity is frozen until it works again", "usageSource", c.source.Name())
		usage = nil
	}
	checkpoints, err := c.checkpoints(ctx)
	if err != nil {
		return err
	}
	pods := c.view.Pods()
	signals := c.readSignals(ctx, start, pods)
	state := nodesOf(c.view.Nodes(), pods, checkpoints)
	seen := map[string]bool{}
	var errs []error
	var writes []nodeWrite
	var outcomes []nodeOutcome
	for _, n := range state.nodes {
		seen[n.Name] = true
		u, ok := usage[n.Name]
		if sig, known := signals[n.Name]; known && ok {
			u.Online = &sig
		}
		d := Decide(n, optional(u, ok), c.settings, start)
		if usageErr != nil {
			d.Why = fmt.Sprintf("frozen: the %s usage source failed: %v", c.source.Name(), usageErr)
		}
		before := state.explained[n.Name]
		d, err := c.act(ctx, n, d, before)
		errs = append(errs, err)
		if err == nil {
			writes = append(writes, nodeWrite{n, d, before})
		}
		outcomes = append(outcomes, nodeOutcome{node: n.Name, decision: d, partial: ok && u.Partial})
		age := time.Duration(-1)
		if ok {
			age = start.Sub(u.At)
		}
		metrics.NodeDecision(n.Name, d.Target.MilliCPU, d.Target.Memory, d.OnlinePeak.MilliCPU, d.OnlinePeak.Memory, age, d.State == StateStale)
	}
	for name := range c.known {
		if !seen[name] {
			metrics.NodeGone(name)
		}
	}
	c.known = seen
	errs = append(errs, c.writeAll(ctx, writes))
	most := ceiling(state.nodes, c.settings)
	c.setSupply(supplyOf(outcomes, usageErr, c.source.Name(), c.settings, most))
	errs = append(errs, c.evictDueVictims(ctx, pods, checkpoints, start), c.warnUnfittable(ctx, most))
	return errors.Join(errs...)
}

// checkpoints are the TFJobs' last reported checkpoints, by
// namespace/name, from the manager's cache.
func (c *Controller) checkpoints(ctx context.Context) (map[string]time.Time, error) {
	var jobs kubeflowv1.TFJobList
	// Read only: a copy of every job each sync would be all garbage.
	if err := c.client.List(ctx, &jobs, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing TFJobs for their checkpoints: %w", err)
	}
	out := map[string]time.Time{}
	for _, j := range jobs.Items {
		if p := j.Status.Progress; p != nil && p.CheckpointTime != nil {
			out[j.Namespace+"/"+j.Name] = p.CheckpointTime.Time
		}
	}
	return out, nil
}

func optional(u Usage, ok bool) *Usage {
	if !ok {
		return nil
	}
	return &u
}

// act carries a decision's evictions out and returns the decision to
// publish: its capacity raised again to what pods the Eviction API refused
// to evict still hold, so the node never offers less than its pods hold,
// and its hold's step lowered only by what the evictions released.
func (c *Controller) act(ctx context.Context, n Node, d Decision, before Explanation) (Decision, error) {
	refusedStep := false
	if len(d.Evict) > 0 {
		refused, err := c.noticeVictims(ctx, n, d)
		if err != nil {
			return d, err
		}
		for _, p := range refused {
			d.Published = d.Published.Add(p.Batch)
			d.Evicting = d.Evicting.Sub(p.Batch)
		}
		d.Online, refusedStep = stepReleased(n.Online, d.Online, d.Held.MilliCPU, d.Evicting.MilliCPU)
		if refusedStep {
			d.Why = fmt.Sprintf("a step of CPU is due (%s), but the Eviction API refused to evict the offline pods chosen (a PodDisruptionBudget?); no room for new pods, and the step is tried again, when the cool-down ends", d.Online.Why)
		}
	}
	if before.State != d.State {
		c.stateChanged(n.Name, before.State, d)
	}
	c.heldChanged(n.Name, before.Online, d, refusedStep)
	return d, nil
}
