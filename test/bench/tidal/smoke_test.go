package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// smallConfig is the flags' defaults over 2 days and 1 seed.
func smallConfig(t *testing.T) config {
	t.Helper()
	cfg, err := parseFlags([]string{"-days", "2", "-seeds", "7", "-out", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The bench runs, and its accounting holds whatever its numbers: nothing
// holds more GPUs than the pool, no policy loses more than it ran, and only
// the loans give notices.
func TestSmokeAccounting(t *testing.T) {
	cfg := smallConfig(t)
	w, err := newWorld(cfg, cfg.seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range policies {
		r, err := newSim(cfg, w, pol, cfg.seeds[0]).run()
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		if r.overcommitted != 0 {
			t.Errorf("%s: %d steps held more than the pool", pol, r.overcommitted)
		}
		if used := r.trainingGPUSeconds + r.onlineGPUSeconds; used > r.capacityGPUSeconds {
			t.Errorf("%s: training %.0f + online %.0f GPU-seconds exceed the pool's %.0f", pol, r.trainingGPUSeconds, r.onlineGPUSeconds, r.capacityGPUSeconds)
		}
		if r.lostGPUSeconds < 0 || r.lostGPUSeconds > r.trainingGPUSeconds {
			t.Errorf("%s: lost %.0f GPU-seconds of %.0f run", pol, r.lostGPUSeconds, r.trainingGPUSeconds)
		}
		if r.trainingGPUSeconds == 0 || len(r.scheduledWaits) == 0 {
			t.Errorf("%s: no training (%.0f GPU-seconds) or no scheduled online pods (%d): the traces are empty", pol, r.trainingGPUSeconds, len(r.scheduledWaits))
		}
		for _, wait := range append(append([]float64(nil), r.scheduledWaits...), r.spikeWaits...) {
			if wait < 0 {
				t.Fatalf("%s: a pod waited %.0f s", pol, wait)
			}
		}
		if pol != loans && (r.notices != 0 || r.deadlineKills != 0) {
			t.Errorf("%s: %d notices, %d deadline kills; only loans give notices", pol, r.notices, r.deadlineKills)
		}
		if pol == loans && r.returnsOnTime+r.deadlineKills > r.notices {
			t.Errorf("loans: %d returns on time and %d at the deadline of %d notices", r.returnsOnTime, r.deadlineKills, r.notices)
		}
	}
}

// A run writes every policy's seed and median outside the tree it is
// given.
func TestSmokeWritesTheTables(t *testing.T) {
	cfg := smallConfig(t)
	if err := run(cfg); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(cfg.out, "runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []summary
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(policies)*2 {
		t.Errorf("runs.json has %d rows, want %d (a seed and the median per policy)", len(rows), len(policies)*2)
	}
	if _, err := os.Stat(filepath.Join(cfg.out, "runs.csv")); err != nil {
		t.Error(err)
	}
}

func TestFlagsRefuseBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"-seeds", "one"}, "-seeds"},
		{[]string{"-gpus", "8"}, "-gpus 8"},
		{[]string{"-start", "Monday"}, "-start"},
		{[]string{"-days", "0"}, "-days"},
		{[]string{"-step", "1500ms"}, "-step"},
		{[]string{"-evaluate", "45s", "-step", "10s"}, "whole number of -step"},
		{[]string{"-early", "-1m"}, "neither negative"},
		{[]string{"-late", "-1m"}, "neither negative"},
		{[]string{"-early", "115m"}, "keep the sum under 2h"},
		{[]string{"-spikes-per-day", "-1"}, "none may be negative"},
		{[]string{"-jobs-per-day", "-1"}, "none may be negative"},
		{[]string{"-backlog", "-1"}, "none may be negative"},
		{[]string{"-grace-period", "-1s"}, "-grace-period"},
	} {
		_, err := parseFlags(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.says)
		}
	}
}

// The autoscaler's changes stay in order of time however far they move
// (Demand.At searches them by time), and none before the start.
func TestNoisyStepsInOrder(t *testing.T) {
	cfg := smallConfig(t)
	w, err := newWorld(cfg, cfg.seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	steps := w.noisySteps(rand.New(rand.NewPCG(1, 1)), 5*time.Hour, 5*time.Hour)
	for i := 1; i < len(steps); i++ {
		if steps[i].At.Before(steps[i-1].At) || steps[i].At.Before(w.start) {
			t.Fatalf("step %d at %s comes before step %d at %s (start %s)", i, steps[i].At, i-1, steps[i-1].At, w.start)
		}
	}
}
