// Command tidal simulates a pool of inference GPUs that scale down at
// night and up in the morning (a KEDA cron schedule, scale-ups up to 30
// minutes early, unplanned spikes) with training jobs taking the idle GPUs,
// and compares on the same traces how training gives them back: priority
// preemption only (today, and Kubernetes' and Kueue's behaviour), reactive
// eviction as Katalyst's tide controller does, and backfill's GPU loans,
// driven by the real decisions of internal/tide. `make bench-tidal` runs
// it; docs/performance.md describes the model and the last run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/backfill-dev/backfill/internal/tide"
	"github.com/backfill-dev/backfill/test/bench/internal/outdir"
)

// config holds the flags.
type config struct {
	gpus, days, backlog      int
	seedList, out            string
	seeds                    []uint64
	start                    time.Time
	step, evaluate, horizon  time.Duration
	reactivePeriod, grace    time.Duration
	early, late              time.Duration
	spikesPerDay, jobsPerDay float64
	tide                     tide.Settings
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-tidal:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	cfg := config{tide: tide.DefaultSettings()}
	fs := flag.NewFlagSet("tidal", flag.ContinueOnError)
	start := fs.String("start", "2026-10-19T00:00:00+02:00", "Start of the simulation (RFC 3339); the default's two weeks hold the end of summer time in Europe/Berlin")
	fs.IntVar(&cfg.gpus, "gpus", 64, "GPUs of the pool")
	fs.IntVar(&cfg.days, "days", 14, "Simulated days")
	fs.StringVar(&cfg.seedList, "seeds", "1,2,3", "Seeds of the traces, comma-separated: the same seed, the same run")
	fs.StringVar(&cfg.out, "out", "", "Directory for runs.json and runs.csv; empty: a new temporary directory")
	fs.DurationVar(&cfg.step, "step", 10*time.Second, "Simulation step")
	fs.DurationVar(&cfg.evaluate, "evaluate", 30*time.Second, "backfill: how often the loans are decided")
	fs.DurationVar(&cfg.horizon, "horizon", 26*time.Hour, "backfill: how far the forecast looks ahead")
	fs.DurationVar(&cfg.reactivePeriod, "reactive-period", 10*time.Second, "Katalyst's tide controller: its period")
	fs.DurationVar(&cfg.grace, "grace-period", 30*time.Second, "Grace period of a preempted or evicted training pod")
	fs.DurationVar(&cfg.early, "early", 30*time.Minute, "Scheduled scale-ups come up to this much before their time")
	fs.DurationVar(&cfg.late, "late", 10*time.Minute, "Scheduled scale-downs come up to this much after their time (the HPA's stabilisation)")
	fs.Float64Var(&cfg.spikesPerDay, "spikes-per-day", 1.5, "Unplanned spikes a day: 1-4 pods of 2 GPUs for 15-90 minutes")
	fs.Float64Var(&cfg.jobsPerDay, "jobs-per-day", 40, "Training jobs arriving a day")
	fs.IntVar(&cfg.backlog, "backlog", 30, "Training jobs waiting at the start")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	return cfg, cfg.validate(*start)
}

func (cfg *config) validate(start string) error {
	var err error
	if cfg.start, err = time.Parse(time.RFC3339, start); err != nil {
		return fmt.Errorf("-start %q: want RFC 3339, e.g. 2026-10-19T00:00:00+02:00", start)
	}
	for _, f := range strings.Split(cfg.seedList, ",") {
		seed, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return fmt.Errorf("-seeds %q: want whole numbers separated by commas, e.g. 1,2,3", cfg.seedList)
		}
		cfg.seeds = append(cfg.seeds, seed)
	}
	need := gpusPerPod * (peakReplicas() + 4)
	switch {
	case cfg.gpus < need:
		return fmt.Errorf("-gpus %d: the schedule's peak and its spikes need %d", cfg.gpus, need)
	case cfg.days < 1:
		return errors.New("-days: simulate 1 day or more")
	case cfg.step <= 0 || cfg.step%time.Second != 0 || cfg.evaluate < cfg.step || cfg.reactivePeriod < cfg.step:
		return fmt.Errorf("-step %s: whole seconds, no longer than -evaluate %s and -reactive-period %s", cfg.step, cfg.evaluate, cfg.reactivePeriod)
	case cfg.evaluate%cfg.step != 0 || cfg.reactivePeriod%cfg.step != 0:
		return fmt.Errorf("-evaluate %s, -reactive-period %s: each a whole number of -step %s, e.g. %s", cfg.evaluate, cfg.reactivePeriod, cfg.step, 3*cfg.step)
	case cfg.horizon < 2*time.Hour:
		return fmt.Errorf("-horizon %s: look ahead 2h or more, e.g. 26h", cfg.horizon)
	case cfg.early < 0 || cfg.late < 0:
		return fmt.Errorf("-early %s, -late %s: how far scale-ups and scale-downs move, neither negative, e.g. 30m and 10m", cfg.early, cfg.late)
	case cfg.spikesPerDay < 0 || cfg.jobsPerDay < 0 || cfg.backlog < 0:
		return fmt.Errorf("-spikes-per-day %g, -jobs-per-day %g, -backlog %d: none may be negative", cfg.spikesPerDay, cfg.jobsPerDay, cfg.backlog)
	case cfg.grace < 0:
		return fmt.Errorf("-grace-period %s is negative: give a training pod's grace period, e.g. 30s", cfg.grace)
	}
	closest, err := closestChanges(cfg.start, cfg.days)
	if err != nil {
		return err
	}
	if cfg.early+cfg.late >= closest {
		return fmt.Errorf("-early %s + -late %s: the schedule's closest changes are %s apart, and one moved early could pass one moved late; keep the sum under %s", cfg.early, cfg.late, closest, closest)
	}
	return cfg.tide.Validate()
}

// run simulates every policy on every seed, prints the table and writes
// the files.
func run(cfg config) error {
	dir, err := outdir.Make(cfg.out, "bench-tidal-")
	if err != nil {
		return err
	}
	rows, err := simulate(cfg)
	if err != nil {
		return err
	}
	printModel(os.Stdout, cfg)
	printTable(os.Stdout, rows)
	printTargets(os.Stdout, rows)
	if err := writeFiles(dir, rows); err != nil {
		return err
	}
	fmt.Printf("\nwritten to %s: runs.json, runs.csv\n", dir)
	return nil
}

// simulate returns, per policy, a summary per seed.
func simulate(cfg config) (map[policy][]summary, error) {
	rows := map[policy][]summary{}
	for _, seed := range cfg.seeds {
		w, err := newWorld(cfg, seed)
		if err != nil {
			return nil, err
		}
		for _, pol := range policies {
			r, err := newSim(cfg, w, pol, seed).run()
			if err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", pol, seed, err)
			}
			if r.overcommitted > 0 {
				return nil, fmt.Errorf("%s, seed %d: %d steps held more GPUs than the pool: the simulation is wrong", pol, seed, r.overcommitted)
			}
			rows[pol] = append(rows[pol], r.summary(pol, strconv.FormatUint(seed, 10)))
		}
	}
	return rows, nil
}
