package main

import (
	"math"
)

// point is one variant on one profile: its summary per seed, and their
// mean, least and most.
type point struct {
	profile string
	variant variant
	seeds   []uint64
	runs    []summary
	// mean, lo and hi hold, for every metric, the mean, least and most
	// over the seeds.
	mean, lo, hi summary
}

// frontier is every point of a sweep, by profile, then in the sweep's
// order.
type frontier []point

// metric is one number of a summary the table, the plot and the verdict
// read.
type metric struct {
	head, format string
	of           func(*summary) *float64
}

// The metrics of the table, in its order.
var (
	metricCPU      = metric{"CPU %", "%.1f", func(s *summary) *float64 { return &s.cpuMean }}
	metricHot80    = metric{"node-min >80%", "%.0f", func(s *summary) *float64 { return &s.hot[0] }}
	metricHot85    = metric{"node-min >85%", "%.0f", func(s *summary) *float64 { return &s.hot[1] }}
	metricHot90    = metric{"node-min >90%", "%.0f", func(s *summary) *float64 { return &s.hot[2] }}
	metricSlow11   = metric{"node-min P99 >1.1x", "%.0f", func(s *summary) *float64 { return &s.slow[0] }}
	metricSlow15   = metric{"node-min P99 >1.5x", "%.0f", func(s *summary) *float64 { return &s.slow[1] }}
	metricSlow3    = metric{"node-min P99 >3x", "%.0f", func(s *summary) *float64 { return &s.slow[2] }}
	metricLatMean  = metric{"infl. mean", "%.3f", func(s *summary) *float64 { return &s.latencyMean }}
	metricLatP99   = metric{"infl. p99", "%.2f", func(s *summary) *float64 { return &s.latencyP99 }}
	metricLost     = metric{"lost rep-h", "%.1f", func(s *summary) *float64 { return &s.lost }}
	metricEvict    = metric{"evictions", "%.0f", func(s *summary) *float64 { return &s.evictions }}
	metricOOM      = metric{"OOM kills", "%.0f", func(s *summary) *float64 { return &s.oomKills }}
	metricRefused  = metric{"PDB refusals", "%.0f", func(s *summary) *float64 { return &s.refused }}
	metricGoodput  = metric{"goodput %", "%.2f", func(s *summary) *float64 { return &s.goodput }}
	metricKept     = metric{"kept rep-h", "%.0f", func(s *summary) *float64 { return &s.work }}
	metricMemory   = metric{"memory %", "%.1f", func(s *summary) *float64 { return &s.memMean }}
	metricOnline   = metric{"online CPU %", "%.1f", func(s *summary) *float64 { return &s.onlineCPUMean }}
	metricRecovery = metric{"recovery rep-h", "%.1f", func(s *summary) *float64 { return &s.recovery }}
	metricFinished = metric{"jobs finished", "%.0f", func(s *summary) *float64 { return &s.finished }}
	metricUnmet    = metric{"online unmet node-min", "%.0f", func(s *summary) *float64 { return &s.unmet }}

	tableMetrics = []metric{metricCPU, metricHot80, metricHot85, metricHot90, metricSlow15, metricSlow3, metricLatMean, metricLatP99,
		metricLost, metricEvict, metricOOM, metricGoodput}
	// A share of node-minutes above 1.1x is near 100% for every policy
	// that reclaims: runs.tsv keeps it, the table does not.
	allMetrics = append(append([]metric{}, tableMetrics...), metricSlow11, metricRefused, metricKept, metricMemory, metricOnline,
		metricRecovery, metricFinished, metricUnmet)
)

// aggregate groups the outcomes by profile and variant.
func aggregate(outcomes []outcome, vs []variant, ps []profile) frontier {
	var f frontier
	for _, p := range ps {
		for i, v := range vs {
			pt := point{profile: p.name, variant: v}
			for _, o := range outcomes {
				if o.profile == p.name {
					pt.seeds = append(pt.seeds, o.seed)
					pt.runs = append(pt.runs, o.sums[i])
				}
			}
			pt.mean, pt.lo, pt.hi = spread(pt.runs)
			pt.mean.policy, pt.mean.knobs = v.family, v.knobs
			f = append(f, pt)
		}
	}
	return f
}

// spread is the mean, least and most of every metric over runs.
func spread(runs []summary) (mean, lo, hi summary) {
	for _, m := range allMetrics {
		sum, least, most := 0.0, math.Inf(1), math.Inf(-1)
		for i := range runs {
			x := *m.of(&runs[i])
			sum, least, most = sum+x, min(least, x), max(most, x)
		}
		*m.of(&mean), *m.of(&lo), *m.of(&hi) = sum/float64(len(runs)), least, most
	}
	return mean, lo, hi
}

// of is the points of one profile and family.
func (f frontier) of(profile, family string) []point {
	var out []point
	for _, p := range f {
		if p.profile == profile && p.variant.family == family {
			out = append(out, p)
		}
	}
	return out
}
