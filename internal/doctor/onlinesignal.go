package doctor

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// checkOnlineSignal lists the nodes whose reclaimed capacity the manager
// holds back because their online pods suffer while offline pods run
// there: an opted-in workload's P99 above its objective, or online pods
// waiting for a CPU. The node explanation keeps the hold (its field
// online). A held node does not grow; while the harm lasts it gives back
// reclaimed CPU a step at a time by evicting offline pods; it grows again
// once the signal has stayed healthy. A hold is the manager protecting
// online pods as meant, yet online pods did suffer: worth a look (WARN),
// one result per node, the longest held first.
func checkOnlineSignal(s *Snapshot) []Result {
	type held struct {
		node string
		e    reclaim.Explanation
	}
	var holds []held
	for i := range s.Nodes {
		n := &s.Nodes[i]
		// An unreadable explanation is reclaim-usage's to report.
		if e, ok, err := reclaim.ReadExplanation(n.Annotations); err == nil && ok && e.Online != nil {
			holds = append(holds, held{n.Name, e})
		}
	}
	if len(holds) == 0 {
		return []Result{ok(CheckOnlineSignal, "no node's reclaimed capacity is held back by its online pods' latency or CPU wait"+optInState(s))}
	}
	slices.SortStableFunc(holds, func(a, b held) int {
		return cmp.Or(a.e.Online.Since.Compare(b.e.Online.Since), cmp.Compare(a.node, b.node))
	})
	out := make([]Result, 0, len(holds))
	for _, h := range holds {
		out = append(out, Result{Check: CheckOnlineSignal, Status: StatusWarn, Object: "node " + h.node,
			Finding: heldFinding(h.node, h.e, s.Now), Fix: heldFix(h.node, h.e.Online.Signal)})
	}
	return out
}

// heldFinding says of a held node which signal holds it, why, since when,
// what it offers while held, what it gave back, and what comes next.
func heldFinding(node string, e reclaim.Explanation, now time.Time) string {
	h := e.Online
	defaults := reclaim.DefaultSettings()
	s := fmt.Sprintf("node %s is held back by its online pods' %s since %s (%s): %s; it offers offline pods at most %s while held",
		node, signalName(h.Signal), h.Since.UTC().Format(time.RFC3339), age(now, h.Since), h.Why, showBatch(colocation.ResourceBatchCPU, h.MilliCPU))
	if h.Steps > 0 {
		s += fmt.Sprintf(", and has given back %d step(s) by evicting offline pods", h.Steps)
	}
	grows := fmt.Sprintf("it grows again once the signal has been healthy for --reclaim-online-recover-after (default %v)", defaults.OnlineRecoverAfter)
	if !h.HealthySince.IsZero() {
		return s + fmt.Sprintf("; the signal has been healthy since %s (%s): %s, unless the harm returns",
			h.HealthySince.UTC().Format(time.RFC3339), age(now, h.HealthySince), grows)
	}
	next := fmt.Sprintf("while the harm lasts it gives back a step (--reclaim-online-step, default %d%% of the node's CPU) by evicting offline pods "+
		"once the hold has lasted --reclaim-online-evict-after (default %v), then another each time the cool-down after an eviction ends",
		defaults.OnlineStep, defaults.OnlineEvictAfter)
	if e.CooldownUntil.After(now) {
		next += fmt.Sprintf(" (the current one ends in %s)", e.CooldownUntil.Sub(now).Round(time.Second))
	}
	return s + "; " + next + "; " + grows
}

// signalName says a hold's signal in words.
func signalName(signal string) string {
	switch signal {
	case reclaim.SignalLatency:
		return "latency (P99 above the objective)"
	case reclaim.SignalCPUWait:
		return "CPU wait"
	}
	return "signal " + signal
}

// heldFix says what a person can do about a held node's signal.
func heldFix(node, signal string) string {
	describe := "`backfill describe node " + node + "` shows the hold beside the node's formula; the cockpit's row Is co-location hurting online? shows the workloads and nodes over time"
	if signal == reclaim.SignalCPUWait {
		return "compare what online pods wait for a CPU here with nodes without offline pods (the cockpit's Online pods waiting for CPU, per node): " +
			"if they wait as much there, they lack CPU of their own (their requests and limits), or --reclaim-online-cpu-wait is below what they normally wait; " +
			"otherwise leave them more room: lower the node agent's --cpu-threshold or raise --reclaim-cpu-margin; " + describe
	}
	return "compare the workload's P99 on nodes without offline pods (backfill_online_latency_p99_seconds{peers=\"without_offline\"}): " +
		"if it misses its objective there too, the objective is too tight or the workload lacks CPU of its own, and holding training back will not cure it; " +
		"otherwise leave it more room: lower the node agent's --cpu-threshold, raise --reclaim-cpu-margin, or keep offline pods off its nodes; " + describe
}

// optInState says how many workloads declare a latency objective, and how
// to opt one in when none does; nothing when the pods of other namespaces
// could not be read.
func optInState(s *Snapshot) string {
	if s.Forbidden[readAllPods] {
		return ""
	}
	workloads := map[string]bool{}
	for i := range s.Pods {
		p := &s.Pods[i]
		if _, ok := p.Annotations[colocation.LatencyObjectiveAnnotation]; ok {
			workloads[p.Namespace+"/"+colocation.WorkloadOf(p)] = true
		}
	}
	if len(workloads) == 0 {
		return fmt.Sprintf("; no pod declares a latency objective (annotation %s), so only online pods' CPU wait can hold a node back: "+
			"to protect a workload's P99, annotate its Deployment's or StatefulSet's pod template with %s: 200ms", colocation.LatencyObjectiveAnnotation, colocation.LatencyObjectiveAnnotation)
	}
	return fmt.Sprintf("; %d workload(s) declare a latency objective (%s)", len(workloads), listNames(slices.Sorted(maps.Keys(workloads))))
}
