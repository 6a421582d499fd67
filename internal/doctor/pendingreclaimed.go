package doctor

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// shortfall is what pending-resources says of pods that wait for
// reclaimed capacity.
type shortfall struct {
	finding, fix string
	// fail: waiting will not help (nothing published, or more than any
	// node could ever offer).
	fail bool
}

// explainReclaimed explains pods the scheduler found short of the batch
// resources names: what one pod asks, the most any node has free of what
// it publishes (its allocatable less the batch requests of the pods bound
// to it), and why: the node that publishes the most publishes too little
// (its formula says why), or enough but other offline pods hold it.
// Reclaimed capacity moves with online use, so a pod that could fit once
// online use falls waits (WARN); one that asks more than any node could
// ever offer, or a cluster where no node publishes any, does not (FAIL).
func explainReclaimed(pending []*corev1.Pod, names []corev1.ResourceName, nodes []nodeFree, now time.Time) shortfall {
	var asks colocation.Resources
	for _, p := range pending {
		asks = asks.Max(colocation.BatchOf(podRequests(p)))
	}
	head := "each asks " + showResources(asks) + " of reclaimed capacity (the scheduler finds too little " + joinNames(names) + ")"
	requested := fmt.Sprintf("run the job on requested capacity with the TFJob annotation %s: %s", colocation.CapacityAnnotation, colocation.CapacityRequested)

	if !anyPublishes(nodes) {
		return shortfall{fail: true,
			finding: head + "; no node publishes any reclaimed capacity (" + notPublishedWhy(nodes, now) + ")",
			fix: "reclaimed capacity is not published: is the manager running with --reclaim and a working usage source? See its events " +
				"(kubectl get events -A --field-selector reason=ReclaimFrozen), its log and `backfill describe node NODE`; or " + requested,
		}
	}

	free, short := reclaimedFreeWords(nodes, names, asks)
	finding := head + "; " + free
	if room := roomFor(nodes, asks); room > 0 {
		return shortfall{
			finding: finding + fmt.Sprintf("; the nodes have room for %s of the %d waiting pod(s) now: %s", roomWords(room, len(pending)), len(pending), roomWhy(room, len(pending))),
			fix:     "nothing is broken: the scheduler tries again as reclaimed capacity changes; if the pods keep waiting, lower their cpu and memory requests, or " + requested,
		}
	}

	var most colocation.Resources
	for _, n := range nodes {
		most = most.Max(reclaimCeiling(n.node))
	}
	if !most.Covers(asks) {
		return shortfall{fail: true,
			finding: finding + fmt.Sprintf(": no node can ever offer that much reclaimed capacity (at most %s: a node's capacity less the margin and what its kubelet reserves, with no online use at all)", showResources(most)),
			fix:     fmt.Sprintf("lower the pods' cpu and memory requests to at most %s per pod (split the work over more replicas), or %s", showResources(most), requested),
		}
	}
	top := mostPublished(nodes, short)
	sooner := "to start sooner, lower the pods' cpu and memory requests, or " + requested
	if published := batchQuantity(top.allocatable, short); published >= amountOf(asks, short) {
		held := published - batchQuantity(top.free, short)
		return shortfall{
			finding: finding + fmt.Sprintf("; %s publishes %s, enough for one pod, but offline pods there hold %s of it: the pods start when those finish or online use falls",
				top.node.Name, showBatch(short, published), showAmount(short, held)),
			fix: fmt.Sprintf("wait for the offline pods that hold it to finish, or for online use to fall; %s; `backfill describe node %s` shows who holds it", sooner, top.node.Name),
		}
	}
	outcome, wait := outlook(top.node, short, amountOf(asks, short), now)
	return shortfall{
		finding: finding + fmt.Sprintf("; no node publishes that much: the most is %s; why so little: %s: %s",
			showBatch(short, batchQuantity(top.allocatable, short)), whyPublished(top.node, short, now), outcome),
		fix: fmt.Sprintf("%s; %s; `backfill describe node %s` shows the formula", wait, sooner, top.node.Name),
	}
}

// reclaimedFreeWords says, per resource of names, the most free on any node, and
// names the first resource that pods asking asks are short of.
func reclaimedFreeWords(nodes []nodeFree, names []corev1.ResourceName, asks colocation.Resources) (string, corev1.ResourceName) {
	var parts []string
	var short corev1.ResourceName
	for _, name := range names {
		n := mostReclaimedFree(nodes, name)
		published, free := batchQuantity(n.allocatable, name), batchQuantity(n.free, name)
		parts = append(parts, fmt.Sprintf("the most %s free on any node is %s (%s publishes %s, its pods hold %s)",
			reclaimedWords(name), showBatch(name, free), n.node.Name, showAmount(name, published), showAmount(name, published-free)))
		if short == "" && amountOf(asks, name) > free {
			short = name
		}
	}
	if short == "" { // each resource fits some node, but no node fits both
		short = names[0]
	}
	return strings.Join(parts, "; "), short
}

// outlook says when pods asking ask of a batch resource can start on the
// node that publishes the most of it, by what its explanation says holds
// the number down, and what to wait for: usage that is current again, the
// end of a cool-down, growth toward a target that fits them (as after the
// manager starts), or online use falling.
func outlook(n *corev1.Node, name corev1.ResourceName, ask int64, now time.Time) (outcome, wait string) {
	e, ok, err := reclaim.ReadExplanation(n.Annotations)
	switch {
	case err != nil || !ok:
		return "the pods start when the manager publishes more", "wait for the manager to decide the node (is it running with --reclaim?)"
	case e.State == reclaim.StateStale:
		return "it does not grow until the node's usage is current again (see reclaim-usage)",
			"restore the manager's usage source (see reclaim-usage)"
	case e.CooldownUntil.After(now):
		return "the pods may start when the cool-down ends", "wait for the cool-down after the eviction to end (--reclaim-cooldown)"
	case amountOf(e.Target, name) >= ask && amountOf(e.Published, name) < amountOf(e.Target, name):
		return "it grows toward a target that fits the pods, so they start within minutes",
			"nothing is broken: wait while reclaimed capacity grows toward its target (--reclaim-growth-per-minute)"
	}
	return "online pods use the rest, so the pods start when online use falls",
		"wait for online use to fall (reclaimed capacity follows it, growing by --reclaim-growth-per-minute)"
}

// anyPublishes reports whether any schedulable node offers reclaimed
// capacity.
func anyPublishes(nodes []nodeFree) bool {
	for _, n := range nodes {
		if publishes(n.node) {
			return true
		}
	}
	return false
}

// notPublishedWhy says what the nodes' explanations tell of a cluster
// where none publishes: a frozen node's reason, or that no manager with
// --reclaim has decided any node.
func notPublishedWhy(nodes []nodeFree, now time.Time) string {
	what := fmt.Sprintf("%s and %s are 0 or missing on all %d schedulable node(s)", colocation.ResourceBatchCPU, colocation.ResourceBatchMemory, len(nodes))
	for _, n := range nodes {
		if e, ok, err := reclaim.ReadExplanation(n.node.Annotations); err == nil && ok && e.State == reclaim.StateStale {
			return what + "; " + whyPublished(n.node, colocation.ResourceBatchCPU, now)
		}
	}
	for _, n := range nodes {
		if _, ok, _ := reclaim.ReadExplanation(n.node.Annotations); ok {
			return what
		}
	}
	return what + fmt.Sprintf("; no node has an explanation (annotation %s), so no manager with --reclaim has decided any", reclaim.ExplanationAnnotation)
}

// mostReclaimedFree is the node with the most of a batch resource free;
// of nodes with as much, the one that publishes most. nodes must not be
// empty.
func mostReclaimedFree(nodes []nodeFree, name corev1.ResourceName) *nodeFree {
	var best *nodeFree
	var bestFree, bestPublished int64
	for i := range nodes {
		n := &nodes[i]
		free, published := batchQuantity(n.free, name), batchQuantity(n.allocatable, name)
		if best == nil || free > bestFree || free == bestFree && published > bestPublished {
			best, bestFree, bestPublished = n, free, published
		}
	}
	return best
}

// roomFor is how many pods asking asks of reclaimed capacity the nodes
// have room for now, each node filled with as many as fit.
func roomFor(nodes []nodeFree, asks colocation.Resources) int {
	room := 0
	for _, n := range nodes {
		free := colocation.BatchOf(n.free)
		fit := -1 // no limit yet
		for _, r := range []struct{ free, ask int64 }{{free.MilliCPU, asks.MilliCPU}, {free.Memory, asks.Memory}} {
			if r.ask > 0 {
				if fit < 0 || int(max(r.free, 0)/r.ask) < fit {
					fit = int(max(r.free, 0) / r.ask)
				}
			}
		}
		room += max(fit, 0)
	}
	return room
}

// roomWords says how many of waiting pods fit: "all", or "2".
func roomWords(room, waiting int) string {
	if room >= waiting {
		return "all"
	}
	return fmt.Sprint(room)
}

// roomWhy says why pods that fit still wait: the scheduler last tried
// before reclaimed capacity grew, or a gang waits until all its pods fit
// at once.
func roomWhy(room, waiting int) string {
	if room >= waiting {
		return "reclaimed capacity grew since the scheduler last tried, and it places them at its next try"
	}
	return "a gang starts only when all its pods fit at once, so the job waits for room for the rest"
}

// mostPublished is the node that publishes the most of a batch resource.
// nodes must not be empty.
func mostPublished(nodes []nodeFree, name corev1.ResourceName) *nodeFree {
	best := &nodes[0]
	for i := range nodes {
		if batchQuantity(nodes[i].allocatable, name) > batchQuantity(best.allocatable, name) {
			best = &nodes[i]
		}
	}
	return best
}

// reclaimedWords names a batch resource for people.
func reclaimedWords(name corev1.ResourceName) string {
	if name == colocation.ResourceBatchCPU {
		return "reclaimed CPU"
	}
	return "reclaimed memory"
}

func joinNames(names []corev1.ResourceName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
