// Command reclaim simulates a cluster whose online services request far
// more than they use and compares, on the same online traces and the same
// backlog of training jobs, three ways to run offline work in the idle
// capacity: priority only (today's behaviour), Koordinator's defaults, and
// backfill's reclaimed capacity, driven through the real reclaim.Decide.
// It answers "how much did we gain, and did online suffer?": `make
// bench-reclaim` runs it; docs/performance.md describes the model.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// config holds the flags.
type config struct {
	nodes, days int
	seed        uint64
	plot        string
	plotDay     int
	settings    reclaim.Settings
}

func main() {
	cfg := parseFlags()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-reclaim:", err)
		os.Exit(1)
	}
}

func parseFlags() config {
	cfg := config{settings: benchSettings()}
	flag.IntVar(&cfg.nodes, "nodes", 100, "Nodes of the simulated cluster")
	flag.IntVar(&cfg.days, "days", 7, "Simulated days, at 1-minute steps")
	flag.Uint64Var(&cfg.seed, "seed", 1, "Seed of the online traces, the backlog and the replicas' use: the same seed, the same run")
	flag.StringVar(&cfg.plot, "plot", "docs/images/reclaim-day.png", "Where to write the plot of one day's CPU utilisation (PNG); empty: none")
	flag.IntVar(&cfg.plotDay, "plot-day", 3, "The simulated day (from 1) the plot shows")
	s := &cfg.settings
	flag.IntVar(&s.Margin.CPU, "reclaim-cpu-margin", s.Margin.CPU, "backfill: percent of a node's CPU kept free of offline work")
	flag.IntVar(&s.Margin.Memory, "reclaim-memory-margin", s.Margin.Memory, "backfill: percent of a node's memory kept free of offline work")
	flag.DurationVar(&s.Window, "reclaim-window", s.Window, "backfill: how far back the online peak looks (whole minutes)")
	flag.IntVar(&s.GrowthPerMinute, "reclaim-growth-per-minute", s.GrowthPerMinute, "backfill: growth of the published capacity, percent of capacity a minute")
	flag.IntVar(&s.MinChange, "reclaim-min-change", s.MinChange, "backfill: smallest change of the published capacity written, percent of capacity")
	flag.IntVar(&s.EvictionMargin.CPU, "reclaim-cpu-eviction-margin", s.EvictionMargin.CPU, "backfill: percent of a node's CPU online pods may take of the margin before offline pods are evicted")
	flag.IntVar(&s.EvictionMargin.Memory, "reclaim-memory-eviction-margin", s.EvictionMargin.Memory, "backfill: percent of a node's memory online pods may take of the margin before offline pods are evicted")
	flag.DurationVar(&s.CPUEvictionDelay, "reclaim-cpu-eviction-delay", s.CPUEvictionDelay, "backfill: how long online CPU must stay high before evictions for CPU (whole minutes)")
	flag.DurationVar(&s.Cooldown, "reclaim-cooldown", s.Cooldown, "backfill: how long a node that evicted offers no room")
	flag.Parse()
	return cfg
}

// benchSettings are backfill's defaults but for the interval, which is
// the simulation's step.
func benchSettings() reclaim.Settings {
	s := reclaim.DefaultSettings()
	s.Interval = time.Minute
	return s
}

func run(cfg config) error {
	if err := validate(cfg); err != nil {
		return err
	}
	began := time.Now()
	spec := defaultNodeSpec()
	tr := newTraces(spec, cfg.nodes, cfg.days*minutesPerDay, cfg.seed)
	policies := []policy{
		&priorityOnly{spec: spec, traces: tr},
		&koordinator{spec: spec, traces: tr},
		newBackfill(spec, tr, cfg.settings),
	}
	tallies := simulateAll(policies, spec, tr, cfg.seed)

	var sums []summary
	for _, t := range tallies {
		sums = append(sums, t.summary())
	}
	printReport(os.Stdout, cfg, sums)
	if cfg.plot != "" {
		if err := writePlot(cfg.plot, cfg.plotDay, cfg.nodes, tallies); err != nil {
			return fmt.Errorf("writing the plot: %w", err)
		}
		fmt.Printf("\nplot: %s (day %d)\n", cfg.plot, cfg.plotDay)
	}
	fmt.Printf("wall time: %.1f s on %d CPUs (the three policies run side by side)\n", time.Since(began).Seconds(), runtime.NumCPU())
	return nil
}

// simulateAll runs each policy on its own goroutine: the runs share only
// the online traces, which they read.
func simulateAll(policies []policy, spec nodeSpec, tr *traces, seed uint64) []*tally {
	tallies := make([]*tally, len(policies))
	var wg sync.WaitGroup
	for i, p := range policies {
		wg.Go(func() { tallies[i] = newSimulation(p, spec, tr, seed).simulate() })
	}
	wg.Wait()
	return tallies
}

func validate(cfg config) error {
	var errs []error
	if cfg.nodes < 1 {
		errs = append(errs, fmt.Errorf("-nodes=%d: must be at least 1", cfg.nodes))
	}
	if cfg.days < 1 {
		errs = append(errs, fmt.Errorf("-days=%d: must be at least 1", cfg.days))
	}
	if cfg.plotDay < 1 || cfg.plotDay > cfg.days {
		errs = append(errs, fmt.Errorf("-plot-day=%d: must be a simulated day, 1 to %d", cfg.plotDay, cfg.days))
	}
	if cfg.settings.Window%time.Minute != 0 {
		errs = append(errs, fmt.Errorf("-reclaim-window=%s: must be whole minutes, the simulation's step", cfg.settings.Window))
	}
	return errors.Join(append(errs, cfg.settings.Validate())...)
}
