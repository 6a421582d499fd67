package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// profile is how often and how long a node's online load bursts above its
// diurnal curve (a traffic spike, a batch of requests, a cron job).
type profile struct {
	name string
	// burstsPerDay is how many bursts start on a node per day, on average.
	burstsPerDay float64
	// durations are the bursts' lengths in minutes.
	durations durations
	// shareMin and shareMax bound a burst's extra CPU, a share of the
	// online pods' requests (uniform); memory rises by burstMemoryShare of
	// it.
	shareMin, shareMax float64
	// about says in a line what the profile is for.
	about string
}

// profiles are the online load the sweep runs against. long-bursts and
// harsh last longer than backfill's CPU eviction delay (15 minutes), where
// riding a burst out with BestEffort training beside online work stops
// being cheap.
var profiles = []profile{
	{name: "default", burstsPerDay: 4, durations: uniformMinutes(2, 10), shareMin: 0.10, shareMax: 0.40,
		about: "4 bursts per node-day, 2-10 min (uniform), +10-40% of requests"},
	{name: "long-bursts", burstsPerDay: 4, durations: uniformMinutes(16, 30), shareMin: 0.10, shareMax: 0.40,
		about: "4 bursts per node-day, 16-30 min (uniform): longer than the CPU eviction delay"},
	{name: "harsh", burstsPerDay: 8, durations: lognormalMinutes(15, 0.9, 5, 45), shareMin: 0.10, shareMax: 0.40,
		about: "8 bursts per node-day, 5-45 min, heavy-tailed (lognormal, median 15 min, sigma 0.9, truncated)"},
}

// profilesNamed is the profiles a -profile flag names: one, a
// comma-separated list, or "all".
func profilesNamed(flag string) ([]profile, error) {
	if flag == "all" {
		return profiles, nil
	}
	var out []profile
	for name := range strings.SplitSeq(flag, ",") {
		i := slices.IndexFunc(profiles, func(p profile) bool { return p.name == name })
		if i < 0 {
			return nil, fmt.Errorf("-profile=%s: unknown profile %q; want default, long-bursts, harsh, a comma-separated list of them, or all", flag, name)
		}
		out = append(out, profiles[i])
	}
	return out, nil
}

// startChance is the chance a burst starts in a minute without one, so
// that burstsPerDay start per day on average however long they last: a
// day holds burstsPerDay bursts and the idle minutes between them.
func (p profile) startChance() float64 {
	idle := minutesPerDay - p.burstsPerDay*p.durations.mean()
	return p.burstsPerDay / idle
}

// durations is a distribution of whole minutes from min to max: weights[k]
// is the chance of min+k minutes.
type durations struct {
	min     int
	weights []float64
}

// uniformMinutes: every length from lo to hi minutes alike.
func uniformMinutes(lo, hi int) durations {
	w := make([]float64, hi-lo+1)
	for k := range w {
		w[k] = 1 / float64(len(w))
	}
	return durations{min: lo, weights: w}
}

// lognormalMinutes is a lognormal of the given median and sigma (of the
// log), truncated to lo..hi minutes and rounded to whole ones: most bursts
// short, a long tail of long ones.
func lognormalMinutes(median, sigma float64, lo, hi int) durations {
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-math.Log(x/median)/(sigma*math.Sqrt2)) }
	w := make([]float64, hi-lo+1)
	sum := 0.0
	for k := range w {
		m := float64(lo + k)
		w[k] = cdf(m+0.5) - cdf(max(m-0.5, 1e-9))
		sum += w[k]
	}
	for k := range w {
		w[k] /= sum
	}
	return durations{min: lo, weights: w}
}

// draw is a length in minutes.
func (d durations) draw(rng *rand.Rand) int {
	return d.min + weighted(rng, d.weights)
}

// mean is the expected length in minutes.
func (d durations) mean() float64 {
	m := 0.0
	for k, w := range d.weights {
		m += float64(d.min+k) * w
	}
	return m
}

// longerThan is the chance of a burst longer than minutes.
func (d durations) longerThan(minutes int) float64 {
	p := 0.0
	for k, w := range d.weights {
		if d.min+k > minutes {
			p += w
		}
	}
	return p
}

// burst is a node's current burst of online load.
type burst struct {
	left  int     // minutes
	share float64 // extra CPU, share of requests
}

// next is the extra load of the next minute, starting a burst now and then
// with the chance p.startChance() is.
func (b *burst) next(rng *rand.Rand, p profile, chance float64) float64 {
	if b.left == 0 && rng.Float64() < chance {
		b.left = p.durations.draw(rng)
		b.share = p.shareMin + rng.Float64()*(p.shareMax-p.shareMin)
	}
	if b.left == 0 {
		return 0
	}
	b.left--
	return b.share
}
