package gpuloan

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/tide"
)

// fakeSamples answers with fixed samples, or an error, and counts reads.
type fakeSamples struct {
	byKey map[string][]tide.Sample
	err   error
	reads int
}

func (f *fakeSamples) samples(_ context.Context, _, _ time.Time, _ time.Duration) (map[string][]tide.Sample, error) {
	f.reads++
	return f.byKey, f.err
}

// Histories are read once per refresh; a workload with too little
// history has none; a failed read keeps the last histories.
func TestHistories(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	week := func(replicas int32, days int) []tide.Sample {
		var out []tide.Sample
		for ts := now.Add(-time.Duration(days) * 24 * time.Hour); ts.Before(now); ts = ts.Add(5 * time.Minute) {
			out = append(out, tide.Sample{At: ts, Replicas: replicas})
		}
		return out
	}
	src := &fakeSamples{byKey: map[string][]tide.Sample{"Deployment/online/infer": week(4, 7), "Deployment/online/new": week(2, 1)}}
	h := &histories{source: src, s: DefaultSettings()}
	got, err := h.of(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["Deployment/online/infer"] == nil {
		t.Fatalf("Histories = %v, want infer's only (new has a day)", got)
	}
	if r := got["Deployment/online/infer"].Replicas(now); r != 5 {
		t.Errorf("infer's forecast = %d, want 4 + 10%% rounded up = 5", r)
	}
	if _, err := h.of(context.Background(), now.Add(30*time.Minute)); err != nil || src.reads != 1 {
		t.Errorf("Within the refresh: %d reads, %v; want 1 and no error", src.reads, err)
	}
	src.err = errors.New("prometheus down")
	kept, err := h.of(context.Background(), now.Add(2*time.Hour))
	if err == nil || src.reads != 2 || kept["Deployment/online/infer"] == nil {
		t.Errorf("A failed read: %d reads, %v, %v; want 2, the error, and the last histories kept", src.reads, err, kept)
	}
	var none *histories
	if got, err := none.of(context.Background(), now); got != nil || err != nil {
		t.Errorf("No Prometheus: %v, %v; want nothing", got, err)
	}
}
