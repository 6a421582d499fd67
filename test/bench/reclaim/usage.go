package main

// usageSource is online use as the cluster-level decisions see it: what a
// scraped source reports, late. A scrape every 30 s and a rate over 2
// minutes make the CPU a decision reads a 2-minute average whose newest
// point is about a minute old; memory (a gauge) is as old, unaveraged.
// The node agents (backfill's and the koordlet) read their node's cgroups
// every second, so they see the minute itself.
type usageSource struct {
	// seen are the traces as reported: CPU averaged over the rate window.
	seen *traces
	// lag is how many minutes old the newest sample is at a decision.
	lag int
}

func newUsageSource(tr *traces, lag, rateWindow int) *usageSource {
	seen := &traces{minutes: tr.minutes, requests: tr.requests, memory: tr.memory, cpu: tr.cpu}
	if rateWindow <= 1 {
		return &usageSource{seen: seen, lag: lag}
	}
	seen.cpu = nil
	for _, cpu := range tr.cpu {
		seen.cpu = append(seen.cpu, rateOf(cpu, rateWindow))
	}
	return &usageSource{seen: seen, lag: lag}
}

// newest is the newest minute a decision at the end of minute t reads;
// negative while the source has none.
func (u *usageSource) newest(t int) int { return t - u.lag }

// rateOf is a counter's rate over window minutes, minute by minute: the
// mean of the window ending at each minute (shorter at the start).
func rateOf(xs []float64, window int) []float64 {
	out := make([]float64, len(xs))
	sum := 0.0
	for m, x := range xs {
		sum += x
		if m >= window {
			sum -= xs[m-window]
		}
		out[m] = sum / float64(min(m+1, window))
	}
	return out
}
