package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// world is one profile and seed: the online traces and the usage source
// every policy of the sweep reads.
type world struct {
	spec   nodeSpec
	traces *traces
	source *usageSource
	// harm is the online latency model; signal how backfill's manager
	// hears online pods.
	harm   *harmModel
	signal signalSettings
}

// variant is one point of the sweep: a policy family at one setting of
// its knobs.
type variant struct {
	family, knobs string
	// series is the line of the frontier plot the variant is on, label
	// its knob there.
	series, label string
	// shipped: the family's default settings; tuned: Koordinator at the
	// highest thresholds swept. The day plot shows them.
	shipped, tuned bool
	build          func(w world) policy
}

// The families of the sweep, in the order of the table.
const (
	familyPriority    = "priority only"
	familyKoordinator = "Koordinator"
	familyBackfill    = "backfill"
	familyAgent       = "backfill + agent"
)

// Knob values swept: the default sweep, and the full one (-sweep=full).
// 82/87 puts a Koordinator point near backfill's utilisation, for a
// comparison at equal utilisation.
var (
	koordSwept     = []koordKnobs{{60, 65}, {70, 75}, {80, 85}, {82, 87}, {85, 90}}
	koordSweptFull = []koordKnobs{{60, 65}, {65, 70}, {70, 75}, {75, 80}, {80, 85}, {82, 87}, {85, 90}}
	marginsSwept   = []int{5, 10, 15, 20}
	delaysSwept    = []time.Duration{0, 5 * time.Minute, 15 * time.Minute}
	// ceilingMargins are the margins swept with the agent's ceiling
	// always on (activation 0) in the default sweep; the full one sweeps
	// every margin.
	ceilingMargins = []int{5, 10}
	// thresholdsSwept are the agent's CPU thresholds swept below the
	// shipped one, at the base margin (the full sweep: and at 5%), with
	// its activation and with the ceiling always on.
	thresholdsSwept     = []int{75, 80}
	thresholdsSweptFull = []int{70, 75, 80}
)

// sweep is the variants of a run. Koordinator: its reclaim thresholds from
// its defaults up. backfill, with and without its node agent: the CPU
// margin at the base CPU eviction delay; the default sweep varies the
// delay for the agent at the base margin only, the full one for every
// margin of both. backfill's agent with its ceiling always on (activation
// 0): the low margins (all in the full sweep) at the base delay.
func sweep(full bool, base reclaim.Settings, agent agentSettings) []variant {
	vs := []variant{{family: familyPriority, knobs: "-", series: familyPriority, shipped: true, build: func(w world) policy {
		return &priorityOnly{spec: w.spec, traces: w.traces}
	}}}
	koords := koordSwept
	if full {
		koords = koordSweptFull
	}
	for i, k := range koords {
		vs = append(vs, variant{family: familyKoordinator, knobs: k.String(), shipped: k == koordDefaults, tuned: i == len(koords)-1,
			series: "Koordinator (label: cpu threshold)", label: fmt.Sprint(k.cpu),
			build: func(w world) policy {
				p := newKoordinator(w.spec, w.traces, w.source, k)
				p.cpuset = w.harm.has(byCores)
				return p
			}})
	}
	for _, s := range backfillSettings(full, false, base) {
		vs = append(vs, backfillVariant(s, base, nil, agent))
	}
	for _, s := range backfillSettings(full, true, base) {
		vs = append(vs, backfillVariant(s, base, &agent, agent))
	}
	if agent.cpuActivation > 0 {
		always := agent
		always.cpuActivation = 0
		for _, s := range ceilingSettings(full, base) {
			vs = append(vs, backfillVariant(s, base, &always, agent))
		}
	}
	return append(vs, thresholdVariants(full, base, agent)...)
}

// thresholdVariants are backfill with the agent at CPU thresholds below
// its own, with its activation and (unless that is 0 already) with the
// ceiling always on.
func thresholdVariants(full bool, base reclaim.Settings, agent agentSettings) []variant {
	thresholds, margins := thresholdsSwept, []int{base.Margin.CPU}
	if full {
		thresholds, margins = thresholdsSweptFull, []int{5, base.Margin.CPU}
	}
	activations := []int{agent.cpuActivation}
	if agent.cpuActivation > 0 {
		activations = append(activations, 0)
	}
	var vs []variant
	for _, act := range activations {
		for _, m := range slices.Compact(margins) {
			for _, th := range thresholds {
				if th >= agent.cpuThreshold || th < agent.cpuFloor {
					continue
				}
				a := agent
				a.cpuThreshold, a.cpuActivation = th, act
				vs = append(vs, backfillVariant(withMarginAndDelay(base, m, base.CPUEvictionDelay), base, &a, agent))
			}
		}
	}
	return vs
}

// backfillSettings are the settings swept for backfill, with its agent or
// without.
func backfillSettings(full, withAgent bool, base reclaim.Settings) []reclaim.Settings {
	var out []reclaim.Settings
	for _, d := range delaysSwept {
		for _, m := range marginsSwept {
			if !full && d != base.CPUEvictionDelay && (!withAgent || m != base.Margin.CPU) {
				continue
			}
			out = append(out, withMarginAndDelay(base, m, d))
		}
	}
	return out
}

// ceilingSettings are the settings swept for backfill with the agent's
// ceiling always on.
func ceilingSettings(full bool, base reclaim.Settings) []reclaim.Settings {
	margins := ceilingMargins
	if full {
		margins = marginsSwept
	}
	var out []reclaim.Settings
	for _, m := range margins {
		out = append(out, withMarginAndDelay(base, m, base.CPUEvictionDelay))
	}
	return out
}

// withMarginAndDelay is base with a CPU margin and CPU eviction delay; the
// CPU eviction margin stays within the margin.
func withMarginAndDelay(base reclaim.Settings, margin int, delay time.Duration) reclaim.Settings {
	s := base
	s.Margin.CPU, s.EvictionMargin.CPU, s.CPUEvictionDelay = margin, min(base.EvictionMargin.CPU, margin), delay
	return s
}

// backfillVariant is backfill with settings s, and with the agent a (nil:
// none); shipped is the agent as shipped, whose activation the knobs name
// when a's differs.
func backfillVariant(s, base reclaim.Settings, a *agentSettings, shipped agentSettings) variant {
	family, knobs := familyBackfill, backfillKnobs(s)
	series := fmt.Sprintf("%s, cpu eviction delay %s (label: cpu margin)", family, minutes(s.CPUEvictionDelay))
	isShipped := s.Margin.CPU == base.Margin.CPU && s.CPUEvictionDelay == base.CPUEvictionDelay
	label := fmt.Sprint(s.Margin.CPU)
	if a != nil {
		family = familyAgent
		series = fmt.Sprintf("%s, cpu eviction delay %s (label: cpu margin)", family, minutes(s.CPUEvictionDelay))
		if a.cpuActivation != shipped.cpuActivation {
			knobs += fmt.Sprintf(", agent activation %d%%", a.cpuActivation)
			series = fmt.Sprintf("%s activation %d%% (ceiling always on), delay %s (label: cpu margin)", family, a.cpuActivation, minutes(s.CPUEvictionDelay))
			isShipped = false
		}
		if a.cpuThreshold != shipped.cpuThreshold {
			knobs += fmt.Sprintf(", agent threshold %d%%", a.cpuThreshold)
			series = fmt.Sprintf("%s activation %d%%, cpu margin %d%%, delay %s (label: agent threshold)", family, a.cpuActivation, s.Margin.CPU, minutes(s.CPUEvictionDelay))
			label, isShipped = fmt.Sprint(a.cpuThreshold), false
		}
	}
	return variant{family: family, knobs: knobs, label: label, series: series, shipped: isShipped,
		build: func(w world) policy {
			b := newBackfill(w.spec, w.traces, w.source, s, a)
			b.signal = w.signal
			return b
		}}
}

func backfillKnobs(s reclaim.Settings) string {
	return fmt.Sprintf("cpu margin %d%%, evict delay %s", s.Margin.CPU, minutes(s.CPUEvictionDelay))
}
