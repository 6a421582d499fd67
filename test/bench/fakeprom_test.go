package main

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// The reclaim controller's own Prometheus source reads every node of the
// plan from the fake, within the model's range.
func TestFakePrometheusServesTheSource(t *testing.T) {
	nodes := []string{"node-0000", "node-0001", "node-0002"}
	plan := planOnline(7, nodes)
	start := time.Now()
	s := reclaim.DefaultSettings()
	prom, err := startFakePrometheus(&usageModel{seed: 7, start: start, requests: plan.requests}, s, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prom.stop() })
	source, err := reclaim.NewPrometheusSource(prom.url, s, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	now := start.Add(10 * time.Minute)
	usage, err := source.Usage(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(usage) != len(nodes) {
		t.Fatalf("usage of %d nodes, want %d", len(usage), len(nodes))
	}
	for _, node := range nodes {
		u, req := usage[node], plan.requests[node]
		share := float64(u.OnlinePeak.MilliCPU) / float64(req.MilliCPU)
		if share < 0.25+peakAbove-0.01 || share > 0.45+peakAbove+0.01 {
			t.Errorf("%s: online CPU peak is %.2f of its requests, want 0.25-0.45 plus %.2f", node, share, peakAbove)
		}
		if u.OnlineLasting.MilliCPU >= u.OnlinePeak.MilliCPU || u.OnlinePeak.Memory == 0 || !u.SystemKnown {
			t.Errorf("%s: usage %+v, want lasting below peak, memory and system use", node, u)
		}
		if age := now.Sub(u.At); age < 0 || age > scrapeInterval {
			t.Errorf("%s: newest sample %s old, want at most %s", node, age, scrapeInterval)
		}
	}
	c := prom.counts()
	if c.total != len(source.Queries()) || len(c.unknown) != 0 {
		t.Errorf("queries %d (unknown %d), want %d", c.total, len(c.unknown), len(source.Queries()))
	}
}

// A query the model does not know is answered with an error.
func TestFakePrometheusRejectsUnknownQueries(t *testing.T) {
	prom, err := startFakePrometheus(&usageModel{start: time.Now()}, reclaim.DefaultSettings(), 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prom.stop() })
	resp, err := http.Post(prom.url+"/api/v1/query", "application/x-www-form-urlencoded", strings.NewReader(url.Values{"query": {"up"}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(prom.counts().unknown) != 1 {
		t.Errorf("status %s, unknown %d; want 400 and 1", resp.Status, len(prom.counts().unknown))
	}
}

func TestHistogramQuantile(t *testing.T) {
	buckets := []bucket{{0.1, 0}, {1, 8}, {10, 10}, {math.Inf(1), 10}}
	for q, want := range map[float64]float64{0.5: 0.1 + 0.9*5/8, 0.9: 1 + 9*0.5} {
		if got := histogramQuantile(q, 10, buckets); math.Abs(got-want) > 1e-9 {
			t.Errorf("q%.2f = %v, want %v", q, got, want)
		}
	}
}
