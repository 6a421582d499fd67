package main

import (
	"cmp"
	"fmt"
	"slices"
)

// targetCPU is the utilisation, percent of allocatable CPU, at which the
// target compares backfill with tuned Koordinator.
const targetCPU = 73

// criterion is one way backfill with its agent must be at or beyond
// Koordinator: no more of it, or (strict) less of it unless both have
// none.
type criterion struct {
	metric metric
	strict bool
}

var criteria = []criterion{
	{metric: metricHot85}, {metric: metricHot90},
	{metric: metricSlow15}, {metric: metricSlow3}, {metric: metricLatMean}, {metric: metricLatP99},
	{metric: metricLost, strict: true},
}

// holds: b is at or beyond k on c.
func (c criterion) holds(b, k summary) bool {
	x, y := *c.metric.of(&b), *c.metric.of(&k)
	if c.strict {
		return x < y || (x == 0 && y == 0)
	}
	return x <= y
}

// verdict is the target on one profile: the backfill + agent variant
// closest to it and what it misses.
type verdict struct {
	profile string
	// best is the backfill + agent variant with the fewest misses among
	// those at the target utilisation on every seed (else the busiest).
	best *point
	// rivals are, per seed, the Koordinator variants it is held against.
	rivals [][]*point
	misses []string
	// holds are the criteria it meets against every rival on every seed.
	holds []string
	// below: no backfill + agent variant reaches targetCPU on every seed.
	below bool
}

func (v verdict) met() bool { return !v.below && len(v.misses) == 0 }

// judgeAll is the verdict of every profile.
func judgeAll(f frontier, ps []profile) []verdict {
	var out []verdict
	for _, p := range ps {
		out = append(out, judge(p.name, f.of(p.name, familyAgent), f.of(p.name, familyKoordinator)))
	}
	return out
}

// judge holds each backfill + agent variant at targetCPU on every seed
// against, on each seed, every Koordinator variant at targetCPU there
// (or, where none reaches it, the busiest one) on every criterion.
func judge(profile string, agents, koords []point) verdict {
	v := verdict{profile: profile}
	if len(agents) == 0 || len(koords) == 0 {
		v.below = true
		return v
	}
	var candidates []*point
	for i := range agents {
		if agents[i].lo.cpuMean >= targetCPU {
			candidates = append(candidates, &agents[i])
		}
	}
	if len(candidates) == 0 {
		v.below = true
		v.best = slices.MaxFunc(pointers(agents), func(a, b *point) int { return cmp.Compare(a.mean.cpuMean, b.mean.cpuMean) })
		v.rivals = rivals(koords)
		v.misses = misses(v.best, v.rivals)
		return v
	}
	v.rivals = rivals(koords)
	v.best = slices.MinFunc(candidates, func(a, b *point) int {
		return cmp.Or(cmp.Compare(len(misses(a, v.rivals)), len(misses(b, v.rivals))), cmp.Compare(b.mean.cpuMean, a.mean.cpuMean))
	})
	v.misses = misses(v.best, v.rivals)
	v.holds = holds(v.best, v.rivals)
	return v
}

// holds names the criteria b meets against every rival on every seed.
func holds(b *point, rivals [][]*point) []string {
	var out []string
	for _, c := range criteria {
		ok := true
		for s, rs := range rivals {
			for _, k := range rs {
				ok = ok && c.holds(b.runs[s], k.runs[s])
			}
		}
		if ok {
			out = append(out, c.metric.head)
		}
	}
	return out
}

// rivals are, per seed, the Koordinator variants at targetCPU, or the
// busiest one when none reaches it.
func rivals(koords []point) [][]*point {
	out := make([][]*point, len(koords[0].runs))
	for s := range out {
		for i := range koords {
			if koords[i].runs[s].cpuMean >= targetCPU {
				out[s] = append(out[s], &koords[i])
			}
		}
		if len(out[s]) == 0 {
			out[s] = []*point{slices.MaxFunc(pointers(koords), func(a, b *point) int {
				return cmp.Compare(a.runs[s].cpuMean, b.runs[s].cpuMean)
			})}
		}
	}
	return out
}

// misses says, per criterion and rival, on which seeds b falls short.
func misses(b *point, rivals [][]*point) []string {
	var out []string
	for _, c := range criteria {
		for _, k := range uniquePoints(rivals) {
			var seeds []uint64
			for s, rs := range rivals {
				if slices.Contains(rs, k) && !c.holds(b.runs[s], k.runs[s]) {
					seeds = append(seeds, b.seeds[s])
				}
			}
			if len(seeds) > 0 {
				f := c.metric.format
				out = append(out, fmt.Sprintf("%s: "+f+" against "+f+" for Koordinator %s (means), short on seeds %v",
					c.metric.head, *c.metric.of(&b.mean), *c.metric.of(&k.mean), k.variant.knobs, seeds))
			}
		}
	}
	return out
}

func uniquePoints(rivals [][]*point) []*point {
	var out []*point
	for _, rs := range rivals {
		for _, k := range rs {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

func pointers(ps []point) []*point {
	out := make([]*point, len(ps))
	for i := range ps {
		out[i] = &ps[i]
	}
	return out
}
