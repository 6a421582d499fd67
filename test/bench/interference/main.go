// Command interference is an experiment, on this machine's real kernel
// cgroups, on the promise of co-location: online latency almost
// unchanged while offline training eats the idle CPU. A real HTTP service
// runs in a cgroup laid out as the kubelet lays out a Burstable pod, an
// open-loop load generator in a cgroup of its own outside kubepods sends
// it requests at fixed times, and a multi-threaded matrix multiplication
// runs beside it as a BestEffort pod: under the kernel's weights alone,
// under the real node agent, on cores of its own. Each condition runs
// once per round, in a random order, beside online alone twice (the A/A
// pair that gives the noise floor), at two online load levels, steady
// and in a burst; the report gives per-round ratios as medians with
// bootstrap 95% intervals, and a window that something else disturbed is
// measured again. `make bench-interference` runs it; docs/performance.md
// describes the experiment and its results.
//
// The same binary is also the three workloads: `interference serve`,
// `interference train` and `interference load` are started by the bench,
// never by hand.
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
	"strings"
	"syscall"
	"time"

	"github.com/backfill-dev/backfill/internal/nodeagent"
)

// config holds the flags.
type config struct {
	cgroupRoot, procRoot string
	levelList            string
	levels               []float64
	rounds               int
	seed                 uint64
	burstFactor          float64
	burstCap             float64
	bursts, cores        bool
	work                 time.Duration
	connections          int
	warmup, probe        time.Duration
	settle, minWindow    time.Duration
	minRequests          int
	offlineAlone         time.Duration
	leadIn, burst        time.Duration
	matrix, block        int
	maxOutside, maxSteal float64
	maxTries             int
	out, jsonOut         string
	agent                nodeagent.Settings
	sweepList            string
	sweep                []variant
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
		case roleLoad:
			exitOn(runLoad(os.Args[2:]))
			return
		}
	}
	cfg, err := parseFlags(os.Args[1:])
	exitOn(err)
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

func parseFlags(args []string) (config, error) {
	cfg := config{agent: nodeagent.DefaultSettings()}
	fs := flag.NewFlagSet("bench-interference", flag.ContinueOnError)
	fs.StringVar(&cfg.cgroupRoot, "cgroup-root", "/sys/fs/cgroup", "Where the cgroup filesystems are mounted")
	fs.StringVar(&cfg.procRoot, "proc-root", "/proc", "Where proc is mounted")
	fs.StringVar(&cfg.levelList, "levels", "35,65", "Online load levels: percents of the node's CPUs the online pod uses, comma-separated")
	fs.IntVar(&cfg.rounds, "rounds", 8, "Rounds: each runs every condition once, in a random order")
	fs.Uint64Var(&cfg.seed, "seed", uint64(time.Now().UnixNano()), "Seed of the rounds' order (printed, to repeat a run)")
	fs.Float64Var(&cfg.burstFactor, "burst-factor", 3, "A burst's request rate as a multiple of the level's")
	fs.Float64Var(&cfg.burstCap, "burst-cap", 0.8, "Most of the node's CPUs (0-1) a burst may take, with the load generator's and the interrupts' share: beyond the node, online alone is overloaded and no ratio means anything; a level where that leaves less than ×1.5 has no burst")
	fs.BoolVar(&cfg.bursts, "bursts", true, "Measure bursts too")
	fs.BoolVar(&cfg.cores, "cores", true, "Measure offline on cores of its own (a cpuset split) where a level leaves a whole core idle")
	fs.DurationVar(&cfg.work, "work", 500*time.Microsecond, "CPU time each online request costs the service (calibrated on this machine)")
	fs.IntVar(&cfg.connections, "connections", 64, "Keep-alive connections of the load generator")
	fs.DurationVar(&cfg.warmup, "warmup", 5*time.Second, "Online load before any measurement, to warm the service")
	fs.DurationVar(&cfg.probe, "probe", 4*time.Second, "Length of each of the three windows that find a level's request rate")
	fs.DurationVar(&cfg.settle, "settle", 3*time.Second, "Load before each measured window (workload start, the agent's first ticks)")
	fs.DurationVar(&cfg.minWindow, "min-window", 20*time.Second, "Shortest steady window")
	fs.IntVar(&cfg.minRequests, "min-requests", 50_000, "Requests a steady window holds at least: 50,000 puts 50 beyond its P99.9")
	fs.DurationVar(&cfg.offlineAlone, "offline-alone", 10*time.Second, "Measured time of the training workload alone (the denominator of its speed)")
	fs.DurationVar(&cfg.leadIn, "lead-in", 5*time.Second, "Steady load before each burst")
	fs.DurationVar(&cfg.burst, "burst", 30*time.Second, "Length of each burst")
	fs.IntVar(&cfg.matrix, "matrix", 384, "Side of the training workload's square float64 matrices")
	fs.IntVar(&cfg.block, "block", 64, "Rows and columns of one block of the blocked multiplication")
	fs.Float64Var(&cfg.maxOutside, "max-outside", 0.10, "Most CPU (cores) the node may use outside the bench in a window before the window is measured again")
	fs.Float64Var(&cfg.maxSteal, "max-steal", 0.05, "Most CPU (cores) the hypervisor may steal in a window before it is measured again")
	fs.IntVar(&cfg.maxTries, "max-tries", 5, "Disturbed windows in a row before the run gives up")
	fs.StringVar(&cfg.out, "out", filepath.Join(os.TempDir(), "backfill-interference.png"), "Where to write the plot (PNG); the JSON record goes beside it unless -json says otherwise")
	fs.StringVar(&cfg.jsonOut, "json", "", "Where to write the JSON record (make bench-reclaim reads it with -calibration); default: -out with .json")
	fs.StringVar(&cfg.sweepList, "sweep", "", `Node agent variants measured beside the defaults at steady load, ";"-separated, each the agent's flags without dashes: "cpu-threshold=70;cpu-idle=false,cpu-activation=0"`)
	registerAgent(fs, &cfg.agent)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.jsonOut == "" && cfg.out != "" {
		cfg.jsonOut = strings.TrimSuffix(cfg.out, filepath.Ext(cfg.out)) + ".json"
	}
	return cfg, validate(&cfg)
}

func validate(cfg *config) error {
	var errs []error
	var err error
	if cfg.levels, err = parseLevels(cfg.levelList); err != nil {
		errs = append(errs, err)
	}
	if cfg.rounds < 3 {
		errs = append(errs, fmt.Errorf("-rounds=%d: must be at least 3: an interval needs rounds to resample", cfg.rounds))
	}
	if cfg.burstFactor < 1 {
		errs = append(errs, fmt.Errorf("-burst-factor=%v: must be at least 1", cfg.burstFactor))
	}
	if cfg.burstCap <= 0 || cfg.burstCap > 1 {
		errs = append(errs, fmt.Errorf("-burst-cap=%v: must be a share of the node's CPUs above 0, at most 1", cfg.burstCap))
	}
	if cfg.work < 10*time.Microsecond || cfg.work > time.Second {
		errs = append(errs, fmt.Errorf("-work=%s: must be from 10µs to 1s", cfg.work))
	}
	if cfg.minRequests < 1000 {
		errs = append(errs, fmt.Errorf("-min-requests=%d: must be at least 1000, or a window's P99 rests on fewer than 10 requests", cfg.minRequests))
	}
	if cfg.connections < 1 {
		errs = append(errs, fmt.Errorf("-connections=%d: must be at least 1", cfg.connections))
	}
	for name, d := range map[string]time.Duration{"-min-window": cfg.minWindow, "-offline-alone": cfg.offlineAlone, "-burst": cfg.burst, "-probe": cfg.probe} {
		if d < 2*time.Second {
			errs = append(errs, fmt.Errorf("%s=%s: must be at least 2s", name, d))
		}
	}
	if cfg.burst <= recoveryGrace {
		errs = append(errs, fmt.Errorf("-burst=%s: must be longer than the %s the burst is given to recover", cfg.burst, recoveryGrace))
	}
	for name, d := range map[string]time.Duration{"-warmup": cfg.warmup, "-settle": cfg.settle, "-lead-in": cfg.leadIn} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s=%s: must not be negative", name, d))
		}
	}
	if cfg.block < 1 || cfg.matrix < cfg.block || cfg.matrix%cfg.block != 0 {
		errs = append(errs, fmt.Errorf("-matrix=%d -block=%d: the matrix side must be a multiple of the block", cfg.matrix, cfg.block))
	}
	if cfg.maxOutside < 0 || cfg.maxSteal < 0 || cfg.maxTries < 1 {
		errs = append(errs, errors.New("-max-outside and -max-steal must not be negative, -max-tries at least 1"))
	}
	errs = append(errs, cfg.agent.Validate())
	if cfg.sweep, err = parseSweep(cfg.sweepList, cfg.agent); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// bench is the run's state: what it made, so that it can undo it.
type bench struct {
	cfg        config
	cpus       int
	hier       hierarchies
	layout     *layout
	iterations int
	perHash    time.Duration
	serve      *workload
	addr       string
	train      *workload
	agent      *agentRun
	live       []*workload
	levels     []*level
	rejected   map[string]int
	began      time.Time
}

func run(ctx context.Context, cfg config) error {
	h, err := preflight(cfg.cgroupRoot)
	if err != nil {
		return err
	}
	b := &bench{cfg: cfg, cpus: runtime.NumCPU(), hier: h, rejected: map[string]int{}, began: time.Now()}
	b.iterations, b.perHash = calibrateWork(cfg.work)
	if b.layout, err = newLayout(h, os.Getpid(), b.cpus); err != nil {
		return err
	}
	defer b.layout.remove()
	defer b.stopAll()
	if err := b.startServe(ctx); err != nil {
		return err
	}
	fmt.Printf("%s; %d CPUs; node busy %s before the run\n", h, b.cpus, loadAverage(cfg.procRoot))
	fmt.Printf("warming up the online service for %s\n", cfg.warmup)
	if _, err := b.measure(ctx, &level{rate: 500, burstRate: 500, window: cfg.warmup}, condition{key: keyAlone}); err != nil {
		return err
	}
	if err := b.calibrateLevels(ctx); err != nil {
		return err
	}
	fmt.Printf("%d rounds of %d windows each, about %s without repeats\n", cfg.rounds, b.windowsPerRound(), b.estimate().Round(time.Minute))
	rounds, err := b.runRounds(ctx)
	if err != nil {
		return err
	}
	res := b.analyse(rounds)
	printReport(os.Stdout, b, res)
	return b.write(res)
}

func (b *bench) windowsPerRound() int {
	n := 1
	for _, l := range b.levels {
		n += len(l.conds)
	}
	return n
}

// write writes the JSON record and the plot.
func (b *bench) write(res *analysis) error {
	if b.cfg.jsonOut != "" {
		if err := b.record(res).Write(b.cfg.jsonOut); err != nil {
			return fmt.Errorf("writing the record: %w", err)
		}
		fmt.Printf("record: %s\n", b.cfg.jsonOut)
	}
	if b.cfg.out != "" {
		if err := writePlot(b.cfg.out, res); err != nil {
			return fmt.Errorf("writing the plot: %w", err)
		}
		fmt.Printf("plot: %s\n", b.cfg.out)
	}
	fmt.Printf("wall time: %s\n", time.Since(b.began).Round(time.Second))
	return nil
}

func (b *bench) startServe(ctx context.Context) error {
	w, err := b.start("online service", []string{b.layout.online.container()}, roleServe, "-iterations", itoa(b.iterations))
	if err != nil {
		return err
	}
	b.serve = w
	select {
	case line, ok := <-w.lines:
		addr, found := strings.CutPrefix(line, "ready ")
		if !ok || !found {
			return fmt.Errorf("the online service exited before it listened (see its error above)")
		}
		b.addr = addr
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the online service did not listen within 10s")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *bench) start(name string, groups []string, role string, args ...string) (*workload, error) {
	w, err := startWorkload(b.layout, name, groups, role, args...)
	if err != nil {
		return nil, err
	}
	b.live = append(b.live, w)
	return w, nil
}

// stop ends one workload; stopAll every workload still running.
func (b *bench) stop(w *workload) {
	w.stop()
	for i, x := range b.live {
		if x == w {
			b.live = append(b.live[:i], b.live[i+1:]...)
			break
		}
	}
}

func (b *bench) stopAll() {
	for _, w := range append([]*workload(nil), b.live...) {
		b.stop(w)
	}
}
