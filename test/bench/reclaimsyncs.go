package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// reclaimState is what the manager's /metrics says of the reclaim
// controller at one moment.
type reclaimState struct {
	syncs, syncSeconds float64 // backfill_reclaim_sync_duration_seconds count and sum
	buckets            []bucket
	writes             float64 // backfill_reclaim_node_writes_total
	sourceUp           float64
	// offTarget are the nodes whose published capacity (cpu or memory) is
	// further than the minimum change from their target, or that have none.
	offTarget int
}

type bucket struct{ le, count float64 }

// scrapeReclaimCounts reads the manager's reclaim sync histogram, node
// writes and source state alone; offTarget is left 0.
func (m *manager) scrapeReclaimCounts(ctx context.Context) (reclaimState, error) {
	families, err := m.families(ctx, metrics.NameReclaimSyncDuration, metrics.NameReclaimNodeWrites, metrics.NameReclaimSourceUp)
	if err != nil {
		return reclaimState{}, err
	}
	return reclaimCounts(families), nil
}

// scrapeReclaim reads the manager's reclaim metrics; nodes and tolerance
// (the minimum change of a node's capacity) decide offTarget.
func (m *manager) scrapeReclaim(ctx context.Context, nodes []string, tolerance reclaim.Resources) (reclaimState, error) {
	families, err := m.families(ctx)
	if err != nil {
		return reclaimState{}, err
	}
	s := reclaimCounts(families)
	target := byNodeAndResource(families[metrics.NameReclaimTarget])
	published := byNodeAndResource(families[metrics.NameNodeBatchAllocatable])
	for _, node := range nodes {
		cpuT, okC := target[node+"/cpu"]
		memT, okM := target[node+"/memory"]
		cpuOff := math.Abs(published[node+"/cpu"]-cpuT) > float64(tolerance.MilliCPU)/1000
		memOff := math.Abs(published[node+"/memory"]-memT) > float64(tolerance.Memory)
		if !okC || !okM || cpuOff || memOff {
			s.offTarget++
		}
	}
	return s, nil
}

// reclaimCounts are the sync histogram, node writes and source state of
// the manager's metrics.
func reclaimCounts(families map[string]*dto.MetricFamily) reclaimState {
	var s reclaimState
	for _, mf := range families[metrics.NameReclaimSyncDuration].GetMetric() {
		h := mf.GetHistogram()
		s.syncs, s.syncSeconds = float64(h.GetSampleCount()), h.GetSampleSum()
		for _, b := range h.GetBucket() {
			s.buckets = append(s.buckets, bucket{le: b.GetUpperBound(), count: float64(b.GetCumulativeCount())})
		}
	}
	for _, mf := range families[metrics.NameReclaimNodeWrites].GetMetric() {
		s.writes += mf.GetCounter().GetValue()
	}
	for _, mf := range families[metrics.NameReclaimSourceUp].GetMetric() {
		s.sourceUp = mf.GetGauge().GetValue()
	}
	return s
}

// byNodeAndResource are a family's gauges by "node/resource".
func byNodeAndResource(f *dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		var node, res string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "node":
				node = l.GetValue()
			case "resource":
				res = l.GetValue()
			}
		}
		out[node+"/"+res] = m.GetGauge().GetValue()
	}
	return out
}

// families reads the manager's /metrics, histograms included: whole, or
// only the metrics named. Naming them spares the manager encoding every
// series (its per-job ones grow with the jobs) each time the harness
// polls, which would count in the CPU the harness measures.
func (m *manager) families(ctx context.Context, names ...string) (map[string]*dto.MetricFamily, error) {
	target := m.metrics
	if len(names) > 0 {
		target += "?" + url.Values{"name[]": names}.Encode()
	}
	m.scrapes.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, fmt.Errorf("the manager's /metrics answered %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing the manager's metrics: %w", err)
	}
	return families, nil
}

// syncRecord is one reclaim sync as the harness saw it: the manager's
// metrics scraped after it ended, the differences from the previous
// record. More than one sync between two scrapes count together.
type syncRecord struct {
	at        time.Time
	syncs     float64
	seconds   float64 // their time, from the histogram's sum
	writes    float64
	queries   int // fake Prometheus queries
	offTarget int
}

// syncTracker records every sync: once the fake Prometheus has seen a
// sync's queries, it scrapes the manager until the sync count moves, so
// that the manager is scraped around syncs, not all the time. At the
// first sync and at the first sync after which every node is at its
// target (the end of the ramp), it takes a mark of the whole harness.
type syncTracker struct {
	c         *cluster
	m         *manager
	prom      *fakePrometheus
	nodes     []string
	tolerance reclaim.Resources

	mu      sync.Mutex
	records []syncRecord
	first   *mark
	rampEnd *mark
	rampIdx int // index of the record that ended the ramp
	err     error
}

// run follows syncs until ctx ends; the fake Prometheus had answered
// queries before the manager started.
func (t *syncTracker) run(ctx context.Context, queries int) {
	var last reclaimState
	lastQueries := queries
	for ctx.Err() == nil {
		if !t.pollUntil(ctx, 100*time.Millisecond, func() bool { return t.prom.counts().total > lastQueries }) {
			return
		}
		var s reclaimState
		var scrapeErr error
		// Each read of the manager's /metrics gathers every series, a
		// second or more of its CPU at thousands of nodes. Once the ramp
		// ended no record needs the nodes' targets: the harness asks for
		// the three small families alone, which spares the manager
		// encoding (not gathering) its per-node and per-job series, and
		// polls once a second from a second after the sync began.
		t.mu.Lock()
		rampEnded := t.rampEnd != nil
		t.mu.Unlock()
		first := 100 * time.Millisecond
		if rampEnded {
			first = time.Second
			select {
			case <-ctx.Done():
				return
			case <-time.After(first): // the sync has just begun
			}
		}
		ended := t.pollUntil(ctx, first, func() bool {
			if rampEnded {
				s, scrapeErr = t.m.scrapeReclaimCounts(ctx)
			} else {
				s, scrapeErr = t.m.scrapeReclaim(ctx, t.nodes, t.tolerance)
			}
			return scrapeErr == nil && s.syncs > last.syncs
		})
		if !ended {
			return
		}
		queries := t.prom.counts().total
		r := syncRecord{at: time.Now(), syncs: s.syncs - last.syncs, seconds: s.syncSeconds - last.syncSeconds,
			writes: s.writes - last.writes, queries: queries - lastQueries, offTarget: s.offTarget}
		last, lastQueries = s, queries
		if err := t.add(ctx, r); err != nil {
			t.fail(err)
			return
		}
	}
}

// add keeps a record and takes the marks it ends.
func (t *syncTracker) add(ctx context.Context, r syncRecord) error {
	t.mu.Lock()
	t.records = append(t.records, r)
	n, needFirst, needRamp := len(t.records), t.first == nil, t.rampEnd == nil && r.offTarget == 0
	t.mu.Unlock()
	if !needFirst && !needRamp {
		return nil
	}
	k, err := takeMark(ctx, t.c, t.m)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if needFirst {
		t.first = &k
	}
	if needRamp {
		t.rampEnd, t.rampIdx = &k, n-1
	}
	return nil
}

func (t *syncTracker) fail(err error) {
	t.mu.Lock()
	t.err = err
	t.mu.Unlock()
}

// pollUntil checks done every interval, backing off to 1 s, until it
// holds (true) or ctx ends (false).
func (t *syncTracker) pollUntil(ctx context.Context, interval time.Duration, done func() bool) bool {
	for {
		if done() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(interval):
		}
		interval = min(2*interval, time.Second)
	}
}

// waitFirst waits for the first sync's mark.
func (t *syncTracker) waitFirst(ctx context.Context, timeout time.Duration) (mark, error) {
	deadline := time.After(timeout)
	for {
		t.mu.Lock()
		first, err := t.first, t.err
		t.mu.Unlock()
		if err != nil {
			return mark{}, err
		}
		if first != nil {
			return *first, nil
		}
		select {
		case <-ctx.Done():
			return mark{}, ctx.Err()
		case <-deadline:
			return mark{}, fmt.Errorf("the manager made no reclaim sync within %s", timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// histogramQuantile estimates the q-quantile of total observations from
// cumulative buckets as Prometheus's histogram_quantile does: linear
// within the bucket; +Inf above the last bound.
func histogramQuantile(q, total float64, buckets []bucket) float64 {
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range buckets {
		if b.count >= rank {
			if b.count == below {
				return b.le
			}
			return lower + (b.le-lower)*(rank-below)/(b.count-below)
		}
		lower, below = b.le, b.count
	}
	return math.Inf(1) // above the last bound
}

// bucketsLabel renders the cumulative buckets for the report.
func bucketsLabel(buckets []bucket) string {
	var parts []string
	for _, b := range buckets {
		parts = append(parts, fmt.Sprintf("≤%s:%.0f", strconv.FormatFloat(b.le, 'g', -1, 64), b.count))
	}
	return strings.Join(parts, " ")
}
