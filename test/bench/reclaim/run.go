package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/backfill-dev/backfill/test/bench/internal/outdir"
)

// outcome is every variant's summary on one profile and seed.
type outcome struct {
	profile string
	seed    uint64
	// sums are by variant, in the sweep's order.
	sums []summary
}

func run(cfg config) error {
	if err := validate(&cfg); err != nil {
		return err
	}
	began := time.Now()
	dir, err := outdir.Make(cfg.out, "bench-reclaim-")
	if err != nil {
		return err
	}
	vs := sweep(cfg.sweep == "full", cfg.settings, cfg.agent)
	printModel(os.Stdout, cfg, vs)
	outcomes, day := runSweep(cfg, vs, os.Stderr)
	frontier := aggregate(outcomes, vs, cfg.profiles)
	printTable(os.Stdout, frontier, cfg.perSeed)
	printVerdicts(os.Stdout, judgeAll(frontier, cfg.profiles))

	files := []string{filepath.Join(dir, "reclaim-day.png"), filepath.Join(dir, "reclaim-frontier.png")}
	if err := writeDayPlot(files[0], cfg.plotDay, cfg.nodes, cfg.profiles[0].name, cfg.seeds[0], day); err != nil {
		return fmt.Errorf("writing the day plot: %w", err)
	}
	if err := writeFrontierPlot(files[1], frontier, cfg.profiles); err != nil {
		return fmt.Errorf("writing the frontier plot: %w", err)
	}
	if err := writeTables(dir, frontier); err != nil {
		return err
	}
	fmt.Printf("\nwritten to %s: reclaim-day.png (day %d, profile %s, seed %d), reclaim-frontier.png, frontier.md, runs.tsv\n",
		dir, cfg.plotDay, cfg.profiles[0].name, cfg.seeds[0])
	if cfg.updateDocImages {
		for _, f := range files {
			to := filepath.Join(docImages, filepath.Base(f))
			if err := copyFile(f, to); err != nil {
				return fmt.Errorf("updating %s (run from the repository's root): %w", to, err)
			}
			fmt.Printf("updated %s\n", to)
		}
	}
	fmt.Printf("wall time: %.0f s on %d CPUs, %d workers (%d variants x %d profiles x %d seeds)\n",
		time.Since(began).Seconds(), runtime.NumCPU(), cfg.workers, len(vs), len(cfg.profiles), len(cfg.seeds))
	return nil
}

// runSweep runs every variant on every profile and seed, a world at a
// time (its traces are the largest thing in memory). day are the tallies
// of the shipped and tuned variants on the first profile and seed, for
// the day plot.
func runSweep(cfg config, vs []variant, progress io.Writer) (outcomes []outcome, day []*tally) {
	spec := defaultNodeSpec()
	for pi, p := range cfg.profiles {
		for si, seed := range cfg.seeds {
			began := time.Now()
			tr := newTraces(spec, cfg.nodes, cfg.days*minutesPerDay, seed, p)
			w := world{spec: spec, traces: tr, source: newUsageSource(tr, int(cfg.lag/time.Minute), int(cfg.rateWindow/time.Minute)),
				harm: cfg.harm, signal: cfg.signal}
			tallies := simulateAll(vs, w, seed, cfg.realism(), cfg.workers)
			o := outcome{profile: p.name, seed: seed}
			for i, t := range tallies {
				o.sums = append(o.sums, t.summary())
				if pi == 0 && si == 0 && (vs[i].shipped || vs[i].tuned) {
					day = append(day, t)
				}
			}
			outcomes = append(outcomes, o)
			fmt.Fprintf(progress, "bench-reclaim: profile %s, seed %d: %d variants in %.0f s\n", p.name, seed, len(vs), time.Since(began).Seconds())
		}
	}
	return outcomes, day
}

// simulateAll runs the variants on one world, workers at a time, each on
// its own goroutine: the runs share only the world, which they read.
func simulateAll(vs []variant, w world, seed uint64, real realism, workers int) []*tally {
	tallies := make([]*tally, len(vs))
	slots := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, v := range vs {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			tallies[i] = newSimulation(v.build(w), w.spec, w.traces, seed, real).simulate()
		})
	}
	wg.Wait()
	return tallies
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
