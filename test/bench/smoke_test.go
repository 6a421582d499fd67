//go:build integration

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
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
		profileDir: dir,
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	var report bytes.Buffer
	err = runTo(ctx, cfg, &report)
	t.Log(report.String())
	if err != nil {
		t.Fatal(err)
	}
	checkProfiled(t, report.String(), filepath.Join(dir, "catch-up-5.pb.gz"), "manager CPU per 1,000 objects / per reconcile")
}

// TestCatchUpSmoke runs the catch-up benchmark on a few jobs: the
// manager's CPU per object and per reconcile are reported and its CPU
// profile is kept where -profile-dir says.
func TestCatchUpSmoke(t *testing.T) {
	dir := t.TempDir()
	binary, err := framework.BuildBackfill(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{
		catchUp: true, jobs: 5, concurrency: 16, baselineConcurrency: 16,
		timeout: 5 * time.Minute, backfill: binary, profileDir: filepath.Join(dir, "profiles"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	var report bytes.Buffer
	err = runTo(ctx, cfg, &report)
	t.Log(report.String())
	if err != nil {
		t.Fatal(err)
	}
	checkProfiled(t, report.String(), filepath.Join(dir, "profiles", "catch-up-5.pb.gz"), "manager CPU per TFJob reconcile")
	checkProfiled(t, report.String(), filepath.Join(dir, "profiles", "catch-up-5.heap.pb.gz"), "the first pod or service, from the manager's start")
	checkProfiled(t, report.String(), filepath.Join(dir, "profiles", "catch-up-5.kube-apiserver.pb.gz"), "CPU profile of kube-apiserver")
}

// checkProfiled checks that a report has row and names a profile at
// path, which exists and is not empty.
func checkProfiled(t *testing.T, report, path, row string) {
	t.Helper()
	if !strings.Contains(report, row) {
		t.Errorf("the report has no row %q", row)
	}
	if !strings.Contains(report, path) {
		t.Errorf("the report does not name the profile %s", path)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("the profile %s is missing or empty: %v", path, err)
	}
}

// TestReclaimScaleSmoke runs the reclaim-scale benchmark on a few nodes
// with running TFJobs and simulated node agents: the jobs run before the
// manager is followed, every agent's pod watch is established (the
// apiserver's pod watches rise by one an agent), their evictions happen,
// and the reclaim invariants hold. Its figures are printed with -v and
// never checked.
func TestReclaimScaleSmoke(t *testing.T) {
	dir := t.TempDir()
	binary, err := framework.BuildBackfill(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{
		reclaimScale: true, nodes: 20, runningJobs: 20, agents: 20,
		agentPhase: 15 * time.Second, agentEvictions: 60, // an eviction every 3 s: about 5 in the agents' phase
		reclaimDuration: 20 * time.Second, seed: 1, concurrency: 16, timeout: 10 * time.Minute,
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
	for _, row := range []string{"20 running single-worker TFJobs", "agents' share of kube-apiserver's CPU", "pod watches open at the end"} {
		if !strings.Contains(report.String(), row) {
			t.Errorf("the report has no %q", row)
		}
	}
}
