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
	"io"
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
	reclaimScale        bool
	nodes               int           // of the reclaim-scale run (reclaimscale.go)
	reclaimDuration     time.Duration // of the reclaim-scale run
	seed                int64         // of the reclaim-scale run's online pods and usage
	nodeLeaseSeconds    int           // of the kwok nodes' Leases
	runningJobs         int           // of the reclaim-scale run (runningjobs.go)
	agents              int           // simulated node agents of the reclaim-scale run (agents.go)
	agentPhase          time.Duration // each of the three phases: without, with and without the agents
	agentEvictions      float64       // the agents' evictions per node per hour
	scale               bool
	catchUp             bool
	profileDir          string // of the catch-up and scale runs' CPU profiles
	sizes               string
	steadyRate          float64
	history             int
	managerMemoryLimit  string
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
	flag.BoolVar(&cfg.reclaimScale, "reclaim-scale", false, "Run the reclaimed-capacity benchmark (-nodes kwok nodes with online pods, a fake Prometheus, the manager followed for -reclaim-duration) instead of the speed run")
	flag.IntVar(&cfg.nodes, "nodes", 1000, "kwok nodes of the scale and reclaim-scale runs: 96 CPUs and 384 GiB each, 95 CPUs and 381 GiB allocatable")
	flag.DurationVar(&cfg.reclaimDuration, "reclaim-duration", 10*time.Minute, "How long the reclaim-scale run follows the manager after its first reclaim sync; at the default growth of 10 %/min the ramp to the first targets alone takes about 6 minutes")
	flag.IntVar(&cfg.nodeLeaseSeconds, "node-lease-seconds", 40, "Duration of the kwok nodes' Leases, which kwok renews every quarter of it as a kubelet does (40: the kubelet's default, a renewal every 10 s a node); longer spares a small machine the renewals of thousands of nodes")
	flag.IntVar(&cfg.runningJobs, "running-jobs", 0, "Single-worker TFJobs on reclaimed capacity the reclaim-scale run creates, binds to its nodes (one a node, round the nodes) and has kwok run before the measured manager starts")
	flag.IntVar(&cfg.agents, "agents", 0, "Simulated node agents of the reclaim-scale run, on its first nodes: after the ramp, -agent-phase of the manager alone, then the agents start and, once all listed their nodes' pods, -agent-phase with them, then -agent-phase alone again (each an informer on its node's pods, its own clients and connections, as the node agent's DaemonSet pods)")
	flag.DurationVar(&cfg.agentPhase, "agent-phase", 3*time.Minute, "Length of each of the reclaim-scale run's three agent phases (see -agents)")
	flag.Float64Var(&cfg.agentEvictions, "agent-evictions", 0.06, "Memory evictions of the simulated agents, per node per hour (0.06: one per 100 nodes every 10 minutes); each is the agent's own ranking and Eviction API calls on a running TFJob's pod")
	flag.Int64Var(&cfg.seed, "seed", 1, "Seed of the reclaim-scale run's online pods and usage")
	flag.BoolVar(&cfg.scale, "scale", false, "Run the scale benchmark (catch-up, baseline and steady submission for each of -sizes, then memory and reclaimed capacity with the largest size running on -nodes kwok nodes, then with -history finished jobs) instead of the speed run")
	flag.BoolVar(&cfg.catchUp, "catch-up", false, "Run the catch-up benchmark (-jobs TFJobs exist, then a fresh manager starts: its CPU per 1,000 objects and per reconcile, and a CPU profile of it) instead of the speed run")
	flag.StringVar(&cfg.profileDir, "profile-dir", "", "Directory for the CPU profiles of the catch-up and scale runs' managers (read them with `go tool pprof`); empty: a new temporary directory, which is kept")
	flag.StringVar(&cfg.sizes, "sizes", "200,2000", "TFJob counts of the scale run, smallest first")
	flag.Float64Var(&cfg.steadyRate, "steady-rate", 20, "TFJobs submitted per second in the scale run's steady submission")
	flag.StringVar(&cfg.managerMemoryLimit, "manager-memory-limit", "", "Memory limit of the container the scale run's measured managers stand in, e.g. 250Mi: they get the soft limit the manager derives from it (GOMEMLIMIT, 90%); empty for none")
	flag.IntVar(&cfg.history, "history", 20000, "Finished single-worker TFJobs kept in the scale run's last memory measurement")
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

// run starts the control plane, runs the chosen benchmark, prints its
// report and stops everything it started.
func run(ctx context.Context, cfg config) error { return runTo(ctx, cfg, os.Stdout) }

// runTo is run, printing the report to out.
func runTo(ctx context.Context, cfg config, out io.Writer) (err error) {
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

	if cfg.catchUp || cfg.scale {
		if cfg.profileDir, err = profileDir(cfg.profileDir); err != nil {
			return err
		}
	}

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

	if cfg.scale {
		res, err := runScale(ctx, c, cfg)
		if err != nil {
			return err
		}
		machine.loadEnd = loadAverage()
		printScaleReport(out, machine, res)
		return res.err()
	}
	if cfg.catchUp {
		res, err := runCatchUp(ctx, c, cfg)
		if err != nil {
			return err
		}
		machine.loadEnd = loadAverage()
		printCatchUpReport(out, machine, res)
		return res.err()
	}
	if cfg.reclaimScale {
		res, err := runReclaimScale(ctx, c, cfg)
		if err != nil {
			return err
		}
		machine.loadEnd = loadAverage()
		printReclaimReport(out, machine, res)
		return res.err()
	}
	if cfg.memory {
		res, err := runMemory(ctx, c, cfg)
		if err != nil {
			return err
		}
		machine.loadEnd = loadAverage()
		printMemoryReport(out, cfg, machine, res)
		return nil
	}
	res, err := runSpeed(ctx, c, cfg)
	if err != nil {
		return err
	}
	machine.loadEnd = loadAverage()
	printSpeedReport(out, cfg, machine, res)
	return nil
}

// extraManagerFlags splits -manager-flags.
func extraManagerFlags(s string) []string {
	return strings.Fields(s)
}

// profileDir is -profile-dir, made if missing, or a new temporary
// directory: either way outside the harness's own, which it removes.
func profileDir(dir string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", "backfill-bench-profiles-")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("-profile-dir=%q: %w", dir, err)
	}
	return filepath.Abs(dir)
}
