// Command interference measures, on this machine's real kernel cgroups,
// the promise of co-location: online latency almost unchanged while
// offline training eats the idle CPU. A real HTTP service runs in a cgroup
// laid out as the kubelet lays out a Burstable pod, an open-loop load
// generator (vegeta) hits it at a fixed rate from outside kubepods, and a
// multi-threaded matrix multiplication runs beside it: at the same CPU
// weight, as a BestEffort pod, and as a BestEffort pod capped by the real
// node agent. `make bench-interference` runs it; docs/performance.md
// describes the scenarios.
//
// The same binary is also the two workloads: `interference serve` and
// `interference train` are started by the bench, never by hand.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// config holds the flags.
type config struct {
	cgroupRoot  string
	procRoot    string
	rate        int
	burstFactor int
	work        time.Duration
	warmup      time.Duration
	settle      time.Duration
	steady      time.Duration
	offlineOnly time.Duration
	leadIn      time.Duration
	burst       time.Duration
	matrix      int
	block       int
	out         string
	agent       agentFlags
}

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case roleServe:
			exitOn(runServe(os.Args[2:]))
			return
		case roleTrain:
			exitOn(runTrain(os.Args[2:]))
			return
		}
	}
	cfg := parseFlags()
	// The first SIGINT or SIGTERM cancels the run; the deferred cleanups
	// then kill the workloads and remove the cgroups.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exitOn(run(ctx, cfg))
}

func exitOn(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-interference:", err)
		os.Exit(1)
	}
}

func parseFlags() config {
	cfg := config{agent: defaultAgentFlags()}
	flag.StringVar(&cfg.cgroupRoot, "cgroup-root", "/sys/fs/cgroup", "Where the cgroup filesystems are mounted")
	flag.StringVar(&cfg.procRoot, "proc-root", "/proc", "Where proc is mounted")
	flag.IntVar(&cfg.rate, "rate", 500, "Online requests per second at steady load (open loop)")
	flag.IntVar(&cfg.burstFactor, "burst-factor", 3, "Online load during a burst, as a multiple of -rate")
	flag.DurationVar(&cfg.work, "work", time.Millisecond, "CPU time each online request costs the service (calibrated on this machine)")
	flag.DurationVar(&cfg.warmup, "warmup", 3*time.Second, "Online load before any measurement, to warm the service and its connections")
	flag.DurationVar(&cfg.settle, "settle", 4*time.Second, "Time each scenario runs before it is measured (workload start, the agent's first ticks)")
	flag.DurationVar(&cfg.steady, "steady", 35*time.Second, "Measured time of each steady-load scenario")
	flag.DurationVar(&cfg.offlineOnly, "offline-alone", 15*time.Second, "Measured time of the training workload alone (the denominator of its throughput)")
	flag.DurationVar(&cfg.leadIn, "lead-in", 5*time.Second, "Steady load before each burst")
	flag.DurationVar(&cfg.burst, "burst", time.Minute, "Length of each online burst")
	flag.IntVar(&cfg.matrix, "matrix", 384, "Side of the training workload's square float64 matrices")
	flag.IntVar(&cfg.block, "block", 64, "Rows and columns of one block of the blocked multiplication")
	flag.StringVar(&cfg.out, "out", filepath.Join(os.TempDir(), "backfill-interference.png"), "Where to write the plot (PNG); empty: none")
	cfg.agent.register(flag.CommandLine)
	flag.Parse()
	return cfg
}

func validate(cfg config) error {
	var errs []error
	if cfg.rate < 1 {
		errs = append(errs, fmt.Errorf("-rate=%d: must be at least 1 request per second", cfg.rate))
	}
	if cfg.burstFactor < 1 {
		errs = append(errs, fmt.Errorf("-burst-factor=%d: must be at least 1", cfg.burstFactor))
	}
	if cfg.work < 10*time.Microsecond || cfg.work > time.Second {
		errs = append(errs, fmt.Errorf("-work=%s: must be from 10µs to 1s", cfg.work))
	}
	for name, d := range map[string]time.Duration{"-steady": cfg.steady, "-offline-alone": cfg.offlineOnly, "-burst": cfg.burst} {
		if d < 2*time.Second {
			errs = append(errs, fmt.Errorf("%s=%s: must be at least 2s, P99 needs samples", name, d))
		}
	}
	for name, d := range map[string]time.Duration{"-warmup": cfg.warmup, "-settle": cfg.settle, "-lead-in": cfg.leadIn} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s=%s: must not be negative", name, d))
		}
	}
	if cfg.block < 1 || cfg.matrix < cfg.block || cfg.matrix%cfg.block != 0 {
		errs = append(errs, fmt.Errorf("-matrix=%d -block=%d: the matrix side must be a multiple of the block", cfg.matrix, cfg.block))
	}
	return errors.Join(append(errs, cfg.agent.validate())...)
}

func run(ctx context.Context, cfg config) error {
	if err := validate(cfg); err != nil {
		return err
	}
	h, err := preflight(cfg.cgroupRoot)
	if err != nil {
		return err
	}
	began := time.Now()
	cpus := runtime.NumCPU()
	if err := quietCheck(cfg.procRoot, cpus); err != nil {
		return err
	}

	iterations, perHash := calibrateWork(cfg.work)
	layout, err := newLayout(h, os.Getpid(), cpus)
	if err != nil {
		return err
	}
	defer layout.remove()

	b := &bench{cfg: cfg, cpus: cpus, hier: h, layout: layout, iterations: iterations, perHash: perHash}
	defer b.stopAll()
	res, err := b.runAll(ctx)
	if err != nil {
		return err
	}
	printReport(os.Stdout, b, res)
	if cfg.out != "" {
		if err := writePlot(cfg.out, res); err != nil {
			return fmt.Errorf("writing the plot: %w", err)
		}
		fmt.Printf("\nplot: %s\n", cfg.out)
	}
	fmt.Printf("wall time: %.0f s\n", time.Since(began).Seconds())
	return nil
}
