package main

import (
	"fmt"
	"math"
)

// protection is how a node's offline pods are kept off online CPU in a
// minute: by the kernel's CPU weights alone, or under a CPU ceiling that
// binds (backfill's node agent once engaged, the koordlet's suppress).
type protection int

const (
	byWeights protection = iota
	byCeiling
)

func (p protection) String() string {
	if p == byCeiling {
		return "ceiling that binds"
	}
	return "CPU weights alone"
}

// interferencePoint is one scenario of `make bench-interference`
// (docs/performance.md, "Online latency beside training on real cgroups"):
// online pods' P99 beside training over their P99 alone at the same load,
// the share of the machine's CPU online pods used, and the share of the
// CPU online pods and the system left idle that training took ("offline
// / idle").
type interferencePoint struct {
	scenario                string
	online, inflation, fill float64
}

// calibration holds, per protection, the steady point (online pods light)
// and the burst point (online pods' rate tripled) of bench-interference
// on 2 CPUs.
var calibration = map[protection][2]interferencePoint{
	byWeights: {
		// BestEffort alone, steady: 1.16x and 1.22x in the two runs with an
		// undisturbed baseline; online 0.40 of 2 cores; offline took
		// 97-99% of the idle CPU.
		{scenario: "steady, BestEffort", online: 0.20, inflation: 1.19, fill: 1.0},
		// Burst x3 beside BestEffort: P99 64.00 ms against 4.00 ms for the
		// burst alone; online 0.94 of 2 cores; offline took 88% of idle.
		{scenario: "burst x3, BestEffort", online: 0.47, inflation: 16.0, fill: 0.88},
	},
	byCeiling: {
		// Steady, the agent's ceiling held all the time: 1.89x and 2.30x;
		// offline took 84-85% of idle.
		{scenario: "steady, ceiling", online: 0.20, inflation: 2.10, fill: 0.845},
		// Burst x3 beside the agent: P99 7.59 ms against 4.00 ms alone;
		// offline took 69% of idle.
		{scenario: "burst x3, ceiling", online: 0.47, inflation: 1.90, fill: 0.69},
	},
}

// harmSlope is the latency inflation per unit of fill at an online share
// of the node's CPU: log-linear between the steady and burst points of
// the protection, flat beyond them (no data there).
func harmSlope(p protection, online float64) float64 {
	c := calibration[p]
	lo := (c[0].inflation - 1) / c[0].fill
	hi := (c[1].inflation - 1) / c[1].fill
	f := min(1, max(0, (online-c[0].online)/(c[1].online-c[0].online)))
	return lo * math.Pow(hi/lo, f)
}

// inflation is online pods' P99 over their P99 alone in a node-minute:
// 1 + fill x slope(online), where online is the share of the node's CPU
// online pods used and fill the share of the CPU they and the system left
// idle that offline pods took. Online pods short of CPU (demand above
// what they got) wait at least in proportion.
func inflation(p protection, online, fill, starved float64) float64 {
	x := 1 + min(1, max(0, fill))*harmSlope(p, online)
	return max(x, starved)
}

// describeCalibration prints the harm model's calibration, for the
// report and the docs.
func describeCalibration() []string {
	lines := []string{"online latency: P99 inflation = 1 + fill x slope(online), per node-minute; fill = offline CPU / (capacity - online - system), 0-1;"}
	lines = append(lines, "  slope log-linear in online CPU share between two bench-interference points (flat outside); (P99 ratio - 1) / fill at each:")
	for _, p := range []protection{byWeights, byCeiling} {
		c := calibration[p]
		lines = append(lines, fmt.Sprintf("  %-18s %s: online %.2f, %.2fx at fill %.2f (slope %.2f); %s: online %.2f, %.2fx at fill %.2f (slope %.2f)",
			p.String()+":", c[0].scenario, c[0].online, c[0].inflation, c[0].fill, harmSlope(p, c[0].online),
			c[1].scenario, c[1].online, c[1].inflation, c[1].fill, harmSlope(p, c[1].online)))
	}
	lines = append(lines, "  a ceiling binds when offline demand exceeds it; priority only (Burstable offline) uses the weights curve, uncalibrated; online short of CPU: at least demand / got")
	return lines
}
