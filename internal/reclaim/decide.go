package reclaim

import (
	"fmt"
	"strings"
	"time"
)

// State says what a node's decision rests on.
type State string

// The states of a node's reclaimed capacity.
const (
	// StateFresh: usage is current; capacity follows it.
	StateFresh State = "Fresh"
	// StateStale: the newest usage sample is older than StaleAfter, or the
	// source has none for the node: capacity is frozen, nothing is evicted.
	StateStale State = "Stale"
)

// Explanation is a node's decision with every input of the formula, in
// the units of the batch resources: what `backfill describe node` shows and
// the node's annotation keeps.
type Explanation struct {
	State State     `json:"state"`
	At    time.Time `json:"at"`
	// UsageAt is the time of the newest usage sample (zero: none).
	UsageAt time.Time `json:"usageAt,omitzero"`
	// Why says in a sentence what moved the published capacity.
	Why string `json:"why"`

	Capacity   Resources `json:"capacity"`
	Margin     Resources `json:"margin"`
	Reserved   Resources `json:"reserved"`
	System     Resources `json:"system"`
	OnlinePeak Resources `json:"onlinePeak"`
	// OnlineLasting is what online pods used at least over the last
	// CPUEvictionDelay, which CPU evictions go by.
	OnlineLasting Resources `json:"onlineLasting"`
	OnRequests    Resources `json:"offlineOnRequests"`
	// Target is capacity - margin - max(reserved, system) - online peak -
	// offline on requests, at least 0.
	Target Resources `json:"target"`
	// Held is what offline pods not terminating hold, before evictions.
	Held Resources `json:"held"`
	// Need is what they must release: online pods have less than the
	// eviction margin free.
	Need Resources `json:"need,omitzero"`
	// Evicting is what the evictions of this decision release.
	Evicting Resources `json:"evicting"`
	// Published is the batch capacity the node offers after this decision.
	Published     Resources `json:"published"`
	CooldownUntil time.Time `json:"cooldownUntil,omitzero"`
	// Online is the hold of the online pods' signal, nil when none.
	Online *OnlineHold `json:"online,omitempty"`
}

// Decision is what to do about one node.
type Decision struct {
	Explanation
	// Evict are the offline pods to evict, least work lost first.
	Evict []Pod
}

// Decide is the decision for one node at now, from its usage (nil when the
// source has none for it), its online pods' signal with it.
func Decide(n Node, u *Usage, s Settings, now time.Time) Decision {
	d := Decision{Explanation: Explanation{
		State: StateFresh, At: now, Capacity: n.Capacity,
		Reserved: n.Capacity.Sub(n.Allocatable).NonNegative(),
		Margin:   s.Margin.of(n.Capacity),
		Held:     held(n.Pods), OnRequests: n.OnRequests,
		Published: n.Published, CooldownUntil: n.CooldownUntil, Online: n.Online,
	}}
	if u == nil || now.Sub(u.At) > s.StaleAfter {
		d.State = StateStale
		d.Why = "frozen: no usage for the node"
		if u != nil {
			d.UsageAt = u.At
			d.Why = fmt.Sprintf("frozen: the newest usage is %s old (stale after %s)", now.Sub(u.At).Round(time.Second), s.StaleAfter)
		}
		return d
	}
	// The peak covers the present: a source may sample the two apart.
	u.OnlinePeak = u.OnlinePeak.Max(u.OnlineLasting)
	d.UsageAt, d.OnlinePeak, d.OnlineLasting, d.System = u.At, u.OnlinePeak, u.OnlineLasting, u.System
	d.Target = n.Capacity.Sub(d.Margin).Sub(d.Reserved.Max(u.System)).Sub(u.OnlinePeak).Sub(n.OnRequests).NonNegative()
	d.Target.Memory = wholeMiB(d.Target.Memory)

	hold, grow, giveBack := listen(n, u.Online, s, d.Held, now)
	d.Online = hold
	d.Need = deficit(n, u, s, d.Held, d.Margin, d.Reserved.Max(u.System))
	d.Need.MilliCPU = max(d.Need.MilliCPU, giveBack)
	if !d.Need.IsZero() {
		d.Evict = ChooseVictims(n.Pods, d.Need, now)
		for _, p := range d.Evict {
			d.Evicting = d.Evicting.Add(p.Batch)
		}
	}
	// A step of the online signal starts a cool-down even without a
	// victim: the next step waits for it, as after an eviction.
	if len(d.Evict) > 0 || giveBack > 0 {
		d.CooldownUntil = now.Add(s.Cooldown)
	}
	remaining := d.Held.Sub(d.Evicting)
	switch {
	case len(d.Evict) > 0:
		d.Published = remaining
		d.Why = fmt.Sprintf("evicting %d offline pod(s): they held %s, leaving online pods less than the eviction margin; no room for new pods until the cool-down ends", len(d.Evict), d.Held)
		if giveBack > 0 {
			d.Why = fmt.Sprintf("evicting %d offline pod(s) to give back a step of CPU: %s; no room for new pods until the cool-down ends", len(d.Evict), hold.Why)
		}
	case now.Before(n.CooldownUntil):
		d.Published = remaining
		d.Why = "cooling down after an eviction: no room for new offline pods"
	default:
		d.Published, d.Why = followTarget(n, u, s, d.Target, remaining, hold, grow, now)
	}
	// Whole MiB read better on a node, and never drop below what pods hold.
	d.Published.Memory = max(wholeMiB(d.Published.Memory), min(remaining.Memory, d.Published.Memory))
	return d
}

// followTarget is what to publish when no pod is evicted and no
// cool-down runs: the published amount moves toward the target, down at
// once and up by the growth rate, never below what pods hold (remaining),
// and held by online latency (hold) or kept from growing (grow false).
func followTarget(n Node, u *Usage, s Settings, target, remaining Resources, hold *OnlineHold, grow bool, now time.Time) (Resources, string) {
	// Growth accrues from the last change, at most a minute's worth, so
	// that small steps wait to be worth a write and a long quiet spell
	// does not let capacity jump.
	growth := n.Capacity.Percent(s.GrowthPerMinute, s.GrowthPerMinute)
	since := min(now.Sub(n.PublishedAt), time.Minute)
	growth = Resources{MilliCPU: scale(growth.MilliCPU, since), Memory: scale(growth.Memory, since)}
	if u.Partial {
		growth = Resources{}
	}
	if !grow {
		growth.MilliCPU = 0
	}
	tolerance := n.Capacity.Percent(s.MinChange, s.MinChange)
	published := Resources{
		MilliCPU: follow(n.Published.MilliCPU, target.MilliCPU, remaining.MilliCPU, growth.MilliCPU, tolerance.MilliCPU),
		Memory:   follow(n.Published.Memory, target.Memory, remaining.Memory, growth.Memory, tolerance.Memory),
	}
	moved := why(n.Published, published, target, u.Partial)
	if hold != nil {
		published.MilliCPU = min(published.MilliCPU, max(hold.MilliCPU, remaining.MilliCPU))
		moved = heldWhy(hold, moved)
	}
	return published, moved
}

// wholeMiB rounds bytes down to a whole MiB.
func wholeMiB(bytes int64) int64 { return bytes &^ (1<<20 - 1) }

// deficit is what offline pods must release, per resource: nothing while
// online pods leave at least the eviction margin free; once they leave less,
// enough to bring what offline pods hold back to the target, the margin
// whole again. Memory goes by the online peak, CPU by a rise that has
// lasted CPUEvictionDelay, since offline pods yield CPU at once.
func deficit(n Node, u *Usage, s Settings, held, margin, system Resources) Resources {
	online := Resources{MilliCPU: u.OnlineLasting.MilliCPU, Memory: u.OnlinePeak.Memory}
	free := n.Capacity.Sub(system).Sub(online).Sub(n.OnRequests).Sub(held)
	target := n.Capacity.Sub(margin).Sub(system).Sub(online).Sub(n.OnRequests).NonNegative()
	floor := s.EvictionMargin.of(n.Capacity)
	var need Resources
	if free.MilliCPU < floor.MilliCPU {
		need.MilliCPU = max(held.MilliCPU-target.MilliCPU, 0)
	}
	if free.Memory < floor.Memory {
		need.Memory = max(held.Memory-target.Memory, 0)
	}
	return need
}

// follow moves one resource's published amount toward its target: down at
// once, up by at most growth, and never below what pods hold; a step
// smaller than tolerance short of the target waits to be worth a write.
func follow(published, target, held, growth, tolerance int64) int64 {
	next := published
	switch {
	case target < published-tolerance:
		next = target
	case target > published+tolerance:
		if step := min(target, published+growth); step-published >= tolerance || step == target {
			next = step
		}
	}
	return max(next, held)
}

// scale is a per-minute amount over elapsed.
func scale(perMinute int64, elapsed time.Duration) int64 {
	return int64(float64(perMinute) * elapsed.Minutes())
}

// why describes a change of the published capacity, per resource.
func why(before, after, target Resources, partial bool) string {
	if after == before {
		if partial {
			return "holding: the usage history does not yet cover the window, so capacity does not grow"
		}
		return "unchanged: within the minimum change of the target"
	}
	var moves []string
	for _, r := range []struct {
		name                  string
		before, after, target int64
	}{
		{"cpu", before.MilliCPU, after.MilliCPU, target.MilliCPU},
		{"memory", before.Memory, after.Memory, target.Memory},
	} {
		switch {
		case r.after < r.before:
			moves = append(moves, r.name+" shrank at once: online use rose")
		case r.after > r.before && r.after == r.target:
			moves = append(moves, r.name+" grew to the target")
		case r.after > r.before:
			moves = append(moves, r.name+" is growing toward the target at the growth limit")
		}
	}
	return strings.Join(moves, "; ")
}
