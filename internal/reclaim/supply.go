package reclaim

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Why pods that ask for reclaimed capacity find none: the reasons of a
// Supply, which the TFJobs whose pods wait for it show on their
// CapacityPending condition.
const (
	// ReasonUsageSourceUnavailable: the usage source fails, or has no
	// current usage of any node, so every node's capacity is frozen.
	ReasonUsageSourceUnavailable = "UsageSourceUnavailable"
	// ReasonReclaimWarmingUp: usage is current, but its history does not
	// yet cover the window, and capacity grows only once it does.
	ReasonReclaimWarmingUp = "ReclaimWarmingUp"
	// ReasonNoIdleCapacity: usage is current, and no node has any capacity
	// to reclaim (online pods use it, or a cool-down runs).
	ReasonNoIdleCapacity = "NoIdleCapacity"
)

// Supply is what the last decision offered pods that ask for reclaimed
// capacity: whether any node publishes some and, when none does, why. It
// is the controller's own knowledge, kept in memory, so that the TFJob
// controller can say why a job's pods wait without reading a node.
type Supply struct {
	// Decided: the controller has decided every node at least once.
	Decided bool
	// Publishing: some node publishes reclaimed capacity.
	Publishing bool
	// Reason and Message say, while no node publishes any, why: a Reason*
	// constant, and a sentence that names the cause and its fix.
	Reason, Message string
	// Ceiling is the most reclaimed capacity any node could ever offer.
	Ceiling Resources
}

// nodeOutcome is one node's decision, as Supply reads it.
type nodeOutcome struct {
	node     string
	decision Decision
	// partial: the node's usage history does not yet cover the window.
	partial bool
}

// supplyOf sums up one decision of every node: the usage source's error
// (if it failed) is the cause when no node publishes, else nodes that are
// all stale, else a history too short to grow on, else no idle capacity.
func supplyOf(outcomes []nodeOutcome, usageErr error, source string, s Settings, most Resources) Supply {
	sup := Supply{Decided: true, Ceiling: most}
	var stale *nodeOutcome
	allStale, warming := len(outcomes) > 0, false
	for i := range outcomes {
		o := &outcomes[i]
		sup.Publishing = sup.Publishing || !o.decision.Published.IsZero()
		switch {
		case o.decision.State == StateStale:
			if stale == nil || o.node < stale.node {
				stale = o
			}
		case o.partial && !o.decision.Target.IsZero():
			allStale, warming = false, true
		default:
			allStale = false
		}
	}
	switch {
	case sup.Publishing:
	case usageErr != nil:
		sup.Reason, sup.Message = ReasonUsageSourceUnavailable, fmt.Sprintf("the %s usage source fails: %v; %s", source, usageErr, sourceFix(source))
	case allStale:
		sup.Reason, sup.Message = ReasonUsageSourceUnavailable, fmt.Sprintf("the %s usage source has no current usage of any node (node %s is %s); %s", source, stale.node, stale.decision.Why, sourceFix(source))
	case warming:
		sup.Reason, sup.Message = ReasonReclaimWarmingUp, fmt.Sprintf("the manager has read usage for less than --reclaim-window (%s), and reclaimed capacity grows only once the usage history covers it: wait up to %s", s.Window, s.Window)
	default:
		sup.Reason, sup.Message = ReasonNoIdleCapacity, "usage is current, but no node has capacity to reclaim: online pods use what the margin leaves, or nodes cool down after evicting offline pods; "+
			"it grows when online use falls (`backfill describe node NODE` shows each node's formula)"
	}
	return sup
}

// sourceFix says how to give the manager usage it can read.
func sourceFix(source string) string {
	off := "or run the manager with --reclaim=false to run TFJob pods on their cpu and memory requests"
	if source == "prometheus" {
		return "make the Prometheus of --prometheus-url answer and scrape the kubelets and the manager (docs/install.md), or install metrics-server and run the manager with --reclaim-usage-source=metrics-api, " + off
	}
	return "install metrics-server (`kubectl top nodes` must list the nodes), or run the manager with --reclaim-usage-source=prometheus --prometheus-url=URL, " + off
}

// Supply is what the last decision offered; zero before the first.
func (c *Controller) Supply() Supply {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.supply
}

// SupplyChanges fire when Supply changes, for the TFJob controller to wake
// the jobs whose pods wait for reclaimed capacity. A change not yet taken
// is not queued twice: its reader reads the latest Supply.
func (c *Controller) SupplyChanges() <-chan event.TypedGenericEvent[Supply] {
	return c.supplyChanges
}

// setSupply records the supply of a decision and tells of a change. A
// reason keeps the message it began with: a source that fails with a new
// error text each sync would otherwise rewrite every waiting job's status
// each interval; the log has every error.
func (c *Controller) setSupply(next Supply) {
	c.mu.Lock()
	prev := c.supply
	if next.Reason == prev.Reason {
		next.Message = prev.Message
	}
	c.supply = next
	c.mu.Unlock()
	if next == prev {
		return
	}
	if next.Reason != prev.Reason && next.Reason != "" {
		c.log.Info("No node publishes reclaimed capacity: TFJob pods that ask for it wait", "reason", next.Reason, "why", next.Message)
	}
	select {
	case c.supplyChanges <- event.TypedGenericEvent[Supply]{Object: next}:
	default:
	}
}
