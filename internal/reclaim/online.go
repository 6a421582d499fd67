package reclaim

import (
	"github.com/backfill-dev/backfill/internal/colocation"

	"fmt"
	"time"
)

// Online protection by the online pods' own word: their latency against
// the objective their workload declares, and how long they wait for a CPU.
// Usage tells how much online pods use; this tells whether they suffer.
// A node whose online pods suffer while offline pods run there stops
// growing at once, gives reclaimed CPU back a step at a time by evicting
// offline pods once the harm has lasted, and grows again only after the
// signal has been healthy for a while, as Heracles does.

// The signals that can hold a node back, the values of OnlineHold.Signal.
const (
	// SignalLatency: an opted-in workload's P99 on the node is above its
	// objective.
	SignalLatency = "latency"
	// SignalCPUWait: the node's online pods together wait for a CPU more
	// than Settings.OnlineCPUWait seconds per second.
	SignalCPUWait = "cpu-wait"
)

// tightSlack is the slack below which a node stops growing though its
// online pods meet their objective: 10% from the objective, as Heracles
// freezes best-effort growth.
const tightSlack = 0.10

// OnlineSignal is what a node's online pods say of their service at one
// decision. A field unknown is left out of the judgement; a node without
// any known field keeps what it had.
type OnlineSignal struct {
	// Slack is the least of (objective - P99) / objective over the
	// opted-in workloads with pods on the node, SlackKnown when any had
	// requests to measure; Workload, P99 and Objective are that
	// workload's.
	Slack      float64
	SlackKnown bool
	Workload   string
	P99        time.Duration
	Objective  time.Duration
	// CPUWait is how long the node's online pods waited for a CPU
	// together, in seconds per second, WaitKnown when measured.
	CPUWait   float64
	WaitKnown bool
}

// OnlineHold is a node held back by its online pods' signal: what the node
// explanation keeps, so that a new leader carries it on.
type OnlineHold struct {
	// Signal is what held the node back: SignalLatency or SignalCPUWait.
	Signal string `json:"signal"`
	// Why says it with the numbers, as of the last harmful decision.
	Why string `json:"why"`
	// Since is the first harmful decision of this hold.
	Since time.Time `json:"since"`
	// HarmSince is the first harmful decision of the harm that lasts now
	// (zero while it does not): a step is given back once it is
	// Settings.OnlineEvictAfter old. A reading that is not harmful,
	// healthy or within tightSlack of the objective, ends the spell; one
	// that measures nothing neither ends nor extends it. A hold written
	// without it (by an older manager) starts its spell at its next
	// harmful decision.
	HarmSince time.Time `json:"harmSince,omitzero"`
	// HealthySince is when the signal turned healthy (zero while harmful):
	// the hold ends Settings.OnlineRecoverAfter later.
	HealthySince time.Time `json:"healthySince,omitzero"`
	// MilliCPU is the most batch CPU the node offers while held: what
	// offline pods held when it began, a step lower each time it gives
	// back.
	MilliCPU int64 `json:"milliCPU"`
	// Steps are the times it gave back CPU by evicting: a step whose
	// victims the Eviction API all refused is not one.
	Steps int `json:"steps,omitempty"`
}

// verdict is what a signal says of a node.
type verdict int

const (
	// unknown: nothing measured; nothing changes.
	unknown verdict = iota
	healthy
	// tight: within tightSlack of the objective; no growth.
	tight
	harmful
)

// judge reads a signal against the settings; for a harmful one, also the
// signal that says so and why, with its numbers.
func judge(sig *OnlineSignal, s Settings) (v verdict, signal, why string) {
	if sig == nil || (!sig.SlackKnown && !sig.WaitKnown) {
		return unknown, "", ""
	}
	switch {
	case sig.SlackKnown && sig.Slack < 0:
		return harmful, SignalLatency, fmt.Sprintf("workload %s has P99 %s, above its objective %s", sig.Workload, sig.P99.Round(time.Millisecond), sig.Objective)
	case sig.WaitKnown && s.OnlineCPUWait > 0 && sig.CPUWait > s.OnlineCPUWait:
		return harmful, SignalCPUWait, fmt.Sprintf("online pods wait %.2f s per second for a CPU together (more than %v)", sig.CPUWait, s.OnlineCPUWait)
	case sig.SlackKnown && sig.Slack < tightSlack:
		return tight, "", ""
	}
	return healthy, "", ""
}

// listen is the online signal's part of a node's decision: the hold the
// node carries after it (nil: none), whether the node may grow, and how
// much batch CPU offline pods must give back now. held is what offline
// pods not terminating hold; n.Online is the hold before.
//
//   - harmful while offline pods hold CPU: a hold begins at what they hold
//     (no growth, no room for new pods); once the harm has lasted
//     OnlineEvictAfter without a reading that is not harmful, and no
//     cool-down runs, it steps down by OnlineStep of the node's CPU and
//     offline pods give back what they hold above it;
//   - harmful without offline pods: no growth, the hold as is, its harm
//     going on;
//   - tight: no growth and no step, the hold as is: neither its harm nor
//     its health goes on;
//   - healthy: a hold ends once healthy for OnlineRecoverAfter;
//   - unknown: nothing changes.
func listen(n Node, sig *OnlineSignal, s Settings, held Resources, now time.Time) (hold *OnlineHold, grow bool, giveBack int64) {
	hold = n.Online
	v, signal, why := judge(sig, s)
	switch {
	case v == unknown:
		return hold, hold == nil, 0
	case hold == nil && v == harmful && held.MilliCPU > 0:
		return &OnlineHold{Signal: signal, Why: why, Since: now, HarmSince: now, MilliCPU: min(held.MilliCPU, n.Published.MilliCPU)}, false, 0
	case hold == nil:
		return nil, v == healthy, 0
	}
	h := *hold
	switch v {
	case harmful:
		h.HealthySince = time.Time{}
		if h.HarmSince.IsZero() {
			h.HarmSince = now
		}
		if held.MilliCPU > 0 {
			h.Signal, h.Why = signal, why
			if now.Sub(h.HarmSince) >= s.OnlineEvictAfter && !now.Before(n.CooldownUntil) {
				h, giveBack = stepDown(h, n, s, held)
			}
		}
		return &h, false, giveBack
	case tight:
		h.HarmSince, h.HealthySince = time.Time{}, time.Time{}
		return &h, false, 0
	}
	h.HarmSince = time.Time{}
	if h.HealthySince.IsZero() {
		h.HealthySince = now
	}
	if now.Sub(h.HealthySince) >= s.OnlineRecoverAfter {
		return nil, true, 0
	}
	return &h, false, 0
}

// stepDown lowers a hold by OnlineStep of the node's CPU, from what
// offline pods hold now when the hold is above it, and says how much they
// must give back; a step that would give back nothing is not taken.
func stepDown(h OnlineHold, n Node, s Settings, held Resources) (OnlineHold, int64) {
	step := n.Capacity.Percent(s.OnlineStep, 0).MilliCPU
	limit := max(min(h.MilliCPU, held.MilliCPU)-step, 0)
	if limit >= held.MilliCPU {
		return h, 0
	}
	h.MilliCPU = limit
	h.Steps++
	return h, held.MilliCPU - limit
}

// heldWhy is the explanation of a decision on a held node: the hold, then
// what moved the capacity.
func heldWhy(h *OnlineHold, moved string) string {
	state := "no growth while online pods are near their objective"
	switch {
	case !h.HealthySince.IsZero():
		state = fmt.Sprintf("healthy since %s, growth resumes once healthy for a while", h.HealthySince.Format(time.TimeOnly))
	case !h.HarmSince.IsZero():
		state = fmt.Sprintf("harmed since %s, no growth while the signal is harmful", h.HarmSince.Format(time.TimeOnly))
	}
	return fmt.Sprintf("held back by online pods since %s (%s): at most %s of batch CPU, %s; %s",
		h.Since.Format(time.TimeOnly), h.Why, colocation.CPUString(h.MilliCPU), state, moved)
}
