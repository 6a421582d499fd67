package main

// histogram is a weighted distribution of inflation ratios (1 and up) in
// steps of histogramStep, the top bin holding everything above; its mean
// is exact.
type histogram struct {
	weights            [histogramBins]float64
	total, weightedSum float64
}

const (
	histogramStep = 0.01
	histogramBins = 4000 // 1.00 to 41.00
)

// add counts x with weight w.
func (h *histogram) add(x, w float64) {
	if w <= 0 {
		return
	}
	i := min(histogramBins-1, max(0, int((x-1)/histogramStep+1e-9)))
	h.weights[i] += w
	h.total += w
	h.weightedSum += x * w
}

func (h *histogram) mean() float64 {
	if h.total == 0 {
		return 1
	}
	return h.weightedSum / h.total
}

// quantile is the lower edge of the bin where the weight reaches q: the
// q-quantile rounded down to the step.
func (h *histogram) quantile(q float64) float64 {
	if h.total == 0 {
		return 1
	}
	acc := 0.0
	for i, w := range h.weights {
		acc += w
		if acc >= q*h.total {
			return 1 + float64(i)*histogramStep
		}
	}
	return 1 + (histogramBins-1)*histogramStep
}
