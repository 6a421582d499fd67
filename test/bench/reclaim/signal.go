package main

import (
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// signalSettings are how backfill's manager hears a node's online pods
// (reclaim.OnlineSignal): their P99 against the objective their workload
// declares, a rate over a window read from a source as late as the usage
// source. CPU wait is not modelled: the record has no measure of it.
type signalSettings struct {
	// objective is the online workload's P99 objective over its P99
	// alone; 0: no workload declares one, no signal.
	objective float64
	// window is the rate's, in whole minutes; the newest sample is the
	// usage source's.
	window int
}

// onlineAlone is the nominal P99 of online pods alone: the signal's P99
// and objective are it times the model's ratios (only the ratio counts).
const onlineAlone = 10 * time.Millisecond

// read is what the manager reads of n's online pods at a decision whose
// newest sample is minute newest: their P99, the mean inflation over the
// window up to that minute, against the objective; nil without an
// objective or a sample.
func (s signalSettings) read(n *node, newest int) *reclaim.OnlineSignal {
	if s.objective <= 0 || newest < 0 {
		return nil
	}
	from := max(0, newest-s.window+1)
	sum := 0.0
	for m := from; m <= newest; m++ {
		sum += n.inflation[m%signalMemory]
	}
	p99 := sum / float64(newest-from+1)
	return &reclaim.OnlineSignal{
		Slack: (s.objective - p99) / s.objective, SlackKnown: true, Workload: "online",
		P99:       time.Duration(p99 * float64(onlineAlone)),
		Objective: time.Duration(s.objective * float64(onlineAlone)),
	}
}
