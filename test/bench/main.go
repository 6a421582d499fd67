// Command bench measures the backfill manager against a local kube-apiserver:
// how fast N TFJobs get their pods and services, what the manager costs in
// CPU, memory and API requests, and how that compares with a plain
// client-go program creating the same objects. `make bench` runs it; it is
// not part of the pass/fail test run. It starts etcd and kube-apiserver
// from bin/ (envtest), runs bin/backfill as a child process, prints a
// report and writes nothing into the repository.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/backfill-dev/backfill/test/framework"
)

// config holds the flags.
type config struct {
	jobs                int
	concurrency         int
	baselineConcurrency int
	memory              bool
	finished, running   int
	timeout             time.Duration
	backfill            string
	managerFlags        string
	keep                bool
}

func main() {
	cfg := config{}
	flag.IntVar(&cfg.jobs, "jobs", 200, "TFJobs created at once in the speed run, each a chief, 4 workers and 2 parameter servers (7 pods, 7 services)")
	flag.IntVar(&cfg.concurrency, "concurrency", 64, "Concurrent requests of the harness when it creates TFJobs or writes pod status")
	flag.IntVar(&cfg.baselineConcurrency, "baseline-concurrency", 64, "Concurrent creates of the plain client-go baseline")
	flag.BoolVar(&cfg.memory, "memory", false, "Run the memory benchmark (finished + running jobs, the manager's peak RSS) instead of the speed run")
	flag.IntVar(&cfg.finished, "finished", 2000, "Finished TFJobs of the memory run")
	flag.IntVar(&cfg.running, "running", 200, "Running TFJobs of the memory run")
	flag.DurationVar(&cfg.timeout, "timeout", 30*time.Minute, "Give up, stop everything and exit non-zero after this long")
	flag.StringVar(&cfg.backfill, "backfill", filepath.Join(framework.BinDir(), "backfill"), "The backfill binary to run as the manager (`make bench` builds it first)")
	flag.StringVar(&cfg.managerFlags, "manager-flags", "", "Extra flags for the measured `backfill manager`, space-separated, e.g. \"--kube-api-qps=500 --kube-api-burst=1000\"")
	flag.BoolVar(&cfg.keep, "keep", false, "Keep the temporary directory (kubeconfigs, manager logs) for inspection")
	flag.Parse()

	if err := runWithin(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// runWithin runs the benchmark until it ends, -timeout passes or the
// harness is interrupted; either way everything it started is stopped.
func runWithin(cfg config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	err := run(ctx, cfg)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (the -timeout of %s passed)", err, cfg.timeout)
	}
	return err
}

// run starts the control plane, runs the chosen benchmark and stops
// everything it started.
func run(ctx context.Context, cfg config) (err error) {
	if _, err := os.Stat(cfg.backfill); err != nil {
		return fmt.Errorf("%s is missing: run `make build` (or `make bench`, which builds it)", cfg.backfill)
	}
	dir, err := os.MkdirTemp("", "backfill-bench-")
	if err != nil {
		return err
	}
	defer func() {
		if cfg.keep {
			fmt.Printf("\nkept %s\n", dir)
			return
		}
		if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
			err = rmErr
		}
	}()

	machine := describeMachine(cfg.backfill)
	fmt.Printf("starting etcd and kube-apiserver from %s\n", framework.BinDir())
	c, err := startCluster(dir)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := c.stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	machine.apiserverVersion = c.serverVersion()

	if cfg.memory {
		res, err := runMemory(ctx, c, cfg)
		if err != nil {
			return err
		}
		machine.loadEnd = loadAverage()
		printMemoryReport(os.Stdout, cfg, machine, res)
		return nil
	}
	res, err := runSpeed(ctx, c, cfg)
	if err != nil {
		return err
	}
	machine.loadEnd = loadAverage()
	printSpeedReport(os.Stdout, cfg, machine, res)
	return nil
}

// extraManagerFlags splits -manager-flags.
func extraManagerFlags(s string) []string {
	return strings.Fields(s)
}
