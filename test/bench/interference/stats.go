package main

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// bootstrapResamples is how many times the rounds are resampled for an
// interval: enough that the 2.5th and 97.5th percentiles of the medians
// move by less than the rounds' own spacing.
const bootstrapResamples = 10000

// interval is the median of per-round values with its bootstrap 95%
// confidence interval: the rounds resampled with replacement, the median
// of each resample, and the 2.5th and 97.5th percentiles of those. The
// seed is fixed, so that the same rounds give the same interval.
func interval(rounds []float64) calibration.Interval {
	vals := finite(rounds)
	if len(vals) == 0 {
		return calibration.Interval{Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	rng := rand.New(rand.NewPCG(1, uint64(len(vals))))
	medians := make([]float64, bootstrapResamples)
	sample := make([]float64, len(vals))
	for i := range medians {
		for j := range sample {
			sample[j] = vals[rng.IntN(len(vals))]
		}
		medians[i] = median(sample)
	}
	slices.Sort(medians)
	return calibration.Interval{
		Median: median(vals),
		Lo:     percentile(medians, 0.025),
		Hi:     percentile(medians, 0.975),
		Rounds: rounds,
	}
}

// median of values; it sorts them.
func median(values []float64) float64 {
	slices.Sort(values)
	n := len(values)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return values[n/2]
	}
	return (values[n/2-1] + values[n/2]) / 2
}

// percentile of sorted values, linearly interpolated between ranks.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	x := p * float64(len(sorted)-1)
	i := int(x)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (x-float64(i))*(sorted[i+1]-sorted[i])
}

// finite are the values that are numbers, copied: a round in which a
// condition could not be measured (no offline pod to compare) is NaN.
func finite(values []float64) []float64 {
	out := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}
