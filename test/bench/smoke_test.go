//go:build integration

package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/test/framework"
)

// TestScaleSmoke runs the scale benchmark at a size CI affords, with the
// manager built from this tree: every step runs, and it fails on what
// the benchmark checks (every pod and service created, no status write
// that changes nothing, no write by a manager catching up with a settled
// cluster, reclaimed capacity's invariants). Its times are printed with
// -v and never checked; full-size numbers are in docs/performance.md.
func TestScaleSmoke(t *testing.T) {
	dir := t.TempDir()
	binary, err := framework.BuildBackfill(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{
		scale: true, sizes: "5,20", steadyRate: 20, history: 40,
		nodes: 10, reclaimDuration: 40 * time.Second, seed: 1,
		concurrency: 16, baselineConcurrency: 16, timeout: 15 * time.Minute,
		backfill: binary, managerFlags: "--reclaim-interval=5s --reclaim-growth-per-minute=1000",
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	var report bytes.Buffer
	err = runTo(ctx, cfg, &report)
	t.Log(report.String())
	if err != nil {
		t.Fatal(err)
	}
}
