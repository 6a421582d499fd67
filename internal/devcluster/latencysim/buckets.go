package latencysim

import (
	"math"
	"sort"
)

// Bucket bounds, in seconds: a factor of fineFactor apart from fineFrom to
// fineTo, where objectives lie, so that a 10% change of a P99 there moves
// it into another bucket; coarse below and above.
const (
	fineFrom   = 0.02
	fineTo     = 2.0
	fineFactor = 1.09
)

var (
	coarseBelow = []float64{0.001, 0.0025, 0.005, 0.01}
	coarseAbove = []float64{2.5, 5, 10}
)

// Buckets are the upper bounds of the simulated histograms' buckets, in
// seconds, increasing. The fine ones are rounded to four significant digits,
// which keeps neighbours within 1.1 of each other and reads well in le.
func Buckets() []float64 {
	b := append([]float64(nil), coarseBelow...)
	for v := fineFrom; v < fineTo*fineFactor; v *= fineFactor {
		b = append(b, roundSignificant(v, 4))
	}
	return append(b, coarseAbove...)
}

// roundSignificant rounds v > 0 to digits significant digits.
func roundSignificant(v float64, digits int) float64 {
	scale := math.Pow(10, float64(digits)-math.Ceil(math.Log10(v)))
	return math.Round(v*scale) / scale
}

// histogram is a classic Prometheus histogram: a count per bucket of
// bounds (the last count, past every bound, is +Inf's), the total count
// and the sum. A value lands in the first bucket whose bound it does not
// exceed, as Prometheus's le means.
type histogram struct {
	bounds []float64
	counts []uint64 // len(bounds)+1, not cumulative
	count  uint64
	sum    float64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// observe records one value.
func (h *histogram) observe(v float64) {
	h.counts[sort.SearchFloat64s(h.bounds, v)]++
	h.count++
	h.sum += v
}

// cumulative is the count of values at most each bound, as a Prometheus
// histogram exposes its buckets (+Inf's is the total count).
func (h *histogram) cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(h.bounds))
	var acc uint64
	for i, b := range h.bounds {
		acc += h.counts[i]
		out[b] = acc
	}
	return out
}
