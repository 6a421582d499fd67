package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// syntheticRun is a bench of two levels, bursts at the light one only,
// and eight rounds whose windows
// are made up: BestEffort doubles P99, the agent adds 15%, alone
// again varies by a few percent.
func syntheticRun(t *testing.T) (*bench, []round) {
	t.Helper()
	cfg, err := parseFlags([]string{"-sweep", "cpu-activation=0", "-out", filepath.Join(t.TempDir(), "p.png")})
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{cfg: cfg, cpus: 2, rejected: map[string]int{rejectOutside: 2}, layout: &layout{sub: "backfill-bench-1", online: &pod{shares: 1638}}}
	for _, target := range []float64{0.35, 0.65} {
		// The heavy level leaves the node no room for a burst.
		lvl := &level{target: target, rate: 1000, burstRate: 2000, window: 20 * time.Second, offlineCores: 1}
		if target > heavyLevel {
			lvl.burstRate = 1000
		}
		lvl.conds = b.conditions(lvl)
		b.levels = append(b.levels, lvl)
	}
	factor := map[string]float64{keyAlone: 1, calibration.KeyAloneAgain: 1, calibration.KeyBestEffort: 2, calibration.KeyAgent: 1.15, "agent cpu-activation=0": 1.15, keyCores: 1.05}
	rng := rand.New(rand.NewPCG(1, 2))
	var rounds []round
	for range cfg.rounds {
		rd := round{offlineAlone: &windowResult{gflops: 3}}
		for _, lvl := range b.levels {
			m := map[string]*windowResult{}
			for _, c := range lvl.conds {
				f := factor[strings.TrimPrefix(c.key, "burst-")] * (0.97 + 0.06*rng.Float64())
				p99 := time.Duration(f * float64(5*time.Millisecond))
				lat := latencyStats{requests: 20000, p50: time.Millisecond, p99: p99, p999: 2 * p99}
				w := &windowResult{cond: c, client: lat, server: lat, afterBurst: lat, online: 2 * lvl.target, idle: 2 * (1 - lvl.target), elapsed: 20 * time.Second,
					p99: []point{{1, 20 * f}, {6, 5 * f}}}
				if c.offline {
					w.offline, w.gflops = 1, 1.5
				}
				if c.agent != nil {
					w.engaged, w.ceiling = 1, 0.8
				}
				m[c.key] = w
			}
			rd.levels = append(rd.levels, m)
		}
		rounds = append(rounds, rd)
	}
	return b, rounds
}

// The report judges by the intervals: BestEffort at twice alone is not
// met, the agent at 1.15× is not met at light load (median over 1.10×)
// and met at heavy load (upper bound under 1.25×); every table and the
// rejected windows are printed, and the record carries every condition
// but the references.
func TestReportJudgesByTheInterval(t *testing.T) {
	b, rounds := syntheticRun(t)
	a := b.analyse(rounds)
	var out bytes.Buffer
	printReport(&out, b, a)
	text := out.String()
	for _, want := range []string{
		"windows: rejected and measured again: 2 for outside CPU",
		"offline BestEffort on 1 core(s) of its own",
		"node agent, cpu-activation=0",
		"- 65%, steady P99 (upper bound ≤ 1.25×): met 1.1",
		"where the time goes",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(text, "- 35%, steady P99 (median ≤ 1.10×, upper bound ≤ 1.20×): NOT met") {
		t.Errorf("BestEffort at 2× or the agent at 1.1× met the light target:\n%s", text)
	}
	rec := b.record(a)
	if err := rec.Validate(); err != nil {
		t.Errorf("the record does not validate: %v", err)
	}
	if n := len(rec.Levels[0].Conds); n != 8 {
		t.Errorf("the 35%% level records %d conditions, want 8 (alone again, BestEffort, agent, the sweep's variant, cores, and three in a burst)", n)
	}
	if err := writePlot(b.cfg.out, a); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(b.cfg.out); err != nil || fi.Size() == 0 {
		t.Errorf("no plot: %v", err)
	}
}
