// Command reclaim simulates a cluster whose online services request far
// more than they use and compares, on the same online traces and the same
// backlog of training jobs, ways to run offline work in the idle
// capacity: priority only (today's behaviour), Koordinator, and
// backfill's reclaimed capacity (driven through the real reclaim.Decide)
// with and without its node agent. It sweeps each policy's own knobs over
// online load profiles and seeds, and prints one table and one frontier
// plot: utilisation against hot nodes, online latency inflation and
// training work lost. `make bench-reclaim` runs it; docs/performance.md
// describes the model.
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// config holds the flags.
type config struct {
	nodes, days, plotDay, workers int
	seedList, profileList, sweep  string
	seeds                         []uint64
	profiles                      []profile
	out                           string
	updateDocImages, perSeed      bool
	// lag and rateWindow shape the usage source of the cluster-level
	// decisions; notice and grace how long an evicted pod takes to go.
	lag, rateWindow, notice, grace time.Duration
	load                           workload
	settings                       reclaim.Settings
	agent                          agentSettings
	// calibration is the interference record the harm model is built
	// from, harm the model once validate has read it.
	calibration string
	harm        *harmModel
	// signal is how backfill's manager hears online pods; onlineWindow
	// the flag that sets its window.
	signal       signalSettings
	onlineWindow time.Duration
}

// docImages is where -update-docs-images writes the plots, from the
// repository's root.
const docImages = "docs/images"

// recordedCalibration is the interference run the harm model reads by
// default, from the repository's root.
const recordedCalibration = "test/bench/reclaim/testdata/interference.json"

func main() {
	cfg := parseFlags()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-reclaim:", err)
		os.Exit(1)
	}
}

func parseFlags() config {
	mgr := manager.DefaultOptions()
	cfg := config{settings: benchSettings(), agent: shippedAgent(), notice: mgr.StopNotice, grace: mgr.GracePeriod,
		signal: signalSettings{objective: 1.5}, onlineWindow: mgr.PrometheusRateWindow}
	flag.IntVar(&cfg.nodes, "nodes", 100, "Nodes of the simulated cluster")
	flag.IntVar(&cfg.days, "days", 7, "Simulated days, at 1-minute steps")
	flag.StringVar(&cfg.seedList, "seeds", "1,2,3", "Seeds of the online traces, the backlog and the replicas' use, comma-separated: the same seed, the same run")
	flag.StringVar(&cfg.profileList, "profile", "all", "Online load profiles: default, long-bursts, harsh, a comma-separated list, or all")
	flag.StringVar(&cfg.sweep, "sweep", "default", "Knob values swept: default (22 variants) or full (48: every CPU eviction delay for every margin, the agent's ceiling always on for every margin, its thresholds 70-80 at two margins, more Koordinator thresholds)")
	flag.StringVar(&cfg.out, "out", "", "Directory for the plots and the tables (runs.tsv, frontier.md); empty: a new temporary directory")
	flag.BoolVar(&cfg.updateDocImages, "update-docs-images", false, "Also write the plots over "+docImages+"/reclaim-day.png and reclaim-frontier.png (run from the repository's root)")
	flag.IntVar(&cfg.plotDay, "plot-day", 3, "The simulated day (from 1) the day plot shows")
	flag.BoolVar(&cfg.perSeed, "per-seed", false, "Print a row per seed under each variant's mean")
	flag.IntVar(&cfg.workers, "workers", runtime.NumCPU(), "Policies simulated side by side")
	flag.DurationVar(&cfg.lag, "usage-lag", time.Minute, "Age of the newest usage sample the cluster-level decisions read (whole minutes): a 30 s scrape and the query")
	flag.DurationVar(&cfg.rateWindow, "rate-window", 2*time.Minute, "Window of the CPU rate the cluster-level decisions read (whole minutes)")
	flag.DurationVar(&cfg.notice, "stop-notice", cfg.notice, "backfill: stop notice before an eviction for CPU (the manager's --stop-notice)")
	flag.DurationVar(&cfg.grace, "grace-period", cfg.grace, "Grace period an evicted pod runs on for (the manager's --termination-grace-period)")
	flag.StringVar(&cfg.calibration, "calibration", recordedCalibration, "Record of make bench-interference (its JSON result) the online latency model is calibrated on")
	flag.Float64Var(&cfg.signal.objective, "online-objective", cfg.signal.objective, "backfill: the online workload's P99 objective over its P99 alone, which the manager's online signal holds nodes to; 0: no objective, no signal")
	flag.DurationVar(&cfg.onlineWindow, "online-window", cfg.onlineWindow, "backfill: rate window of the online signal's P99 (whole minutes; the manager's --prometheus-rate-window)")
	flag.Float64Var(&cfg.load.pdbBlocking, "pdb-blocking", 0.10, "Share of jobs with a PodDisruptionBudget of maxUnavailable 0: the Eviction API refuses to evict their pods")
	flag.Float64Var(&cfg.load.pdbOne, "pdb-one", 0.10, "Share of jobs with a PodDisruptionBudget of maxUnavailable 1")
	flag.Float64Var(&cfg.load.growing, "memory-growing", 0.20, "Share of replicas whose memory grows above their request (5-25% of it an hour, up to 1.5x)")
	s := &cfg.settings
	flag.IntVar(&s.Margin.CPU, "reclaim-cpu-margin", s.Margin.CPU, "backfill: base percent of a node's CPU kept free of offline work (the sweep varies it)")
	flag.IntVar(&s.Margin.Memory, "reclaim-memory-margin", s.Margin.Memory, "backfill: percent of a node's memory kept free of offline work")
	flag.DurationVar(&s.Window, "reclaim-window", s.Window, "backfill: how far back the online peak looks (whole minutes)")
	flag.IntVar(&s.GrowthPerMinute, "reclaim-growth-per-minute", s.GrowthPerMinute, "backfill: growth of the published capacity, percent of capacity a minute")
	flag.IntVar(&s.MinChange, "reclaim-min-change", s.MinChange, "backfill: smallest change of the published capacity written, percent of capacity")
	flag.IntVar(&s.EvictionMargin.CPU, "reclaim-cpu-eviction-margin", s.EvictionMargin.CPU, "backfill: percent of a node's CPU online pods may take of the margin before offline pods are evicted")
	flag.IntVar(&s.EvictionMargin.Memory, "reclaim-memory-eviction-margin", s.EvictionMargin.Memory, "backfill: percent of a node's memory online pods may take of the margin before offline pods are evicted")
	flag.DurationVar(&s.CPUEvictionDelay, "reclaim-cpu-eviction-delay", s.CPUEvictionDelay, "backfill: base time online CPU must stay high before evictions for CPU (whole minutes; the sweep varies it)")
	flag.DurationVar(&s.Cooldown, "reclaim-cooldown", s.Cooldown, "backfill: how long a node that evicted offers no room")
	a := &cfg.agent
	flag.IntVar(&a.cpuThreshold, "agent-cpu-threshold", a.cpuThreshold, "backfill's node agent: percent of the node's CPU online, system and offline pods may use together (its --cpu-threshold)")
	flag.IntVar(&a.cpuActivation, "agent-cpu-activation", a.cpuActivation, "backfill's node agent: percent of the node's CPU online pods and the system must use before the ceiling applies (its --cpu-activation)")
	flag.IntVar(&a.cpuFloor, "agent-cpu-floor", a.cpuFloor, "backfill's node agent: percent of the node's CPU offline pods keep (its --cpu-floor)")
	flag.IntVar(&a.memoryThreshold, "agent-memory-threshold", a.memoryThreshold, "backfill's node agent: percent of the node's memory in use above which it evicts offline pods, 0 none (its --memory-threshold)")
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

// realism is the flags' model of the cluster beyond the policies.
func (cfg config) realism() realism {
	return realism{load: cfg.load, noticed: wholeMinutesUp(cfg.notice + cfg.grace), unnoticed: wholeMinutesUp(cfg.grace), harm: cfg.harm}
}

// wholeMinutesUp is d in minutes, rounded up: a pod that runs on for part
// of a minute holds the whole of it at the simulation's step.
func wholeMinutesUp(d time.Duration) int { return int(math.Ceil(d.Minutes())) }

func validate(cfg *config) error {
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
	if cfg.workers < 1 {
		errs = append(errs, fmt.Errorf("-workers=%d: must be at least 1", cfg.workers))
	}
	if cfg.sweep != "default" && cfg.sweep != "full" {
		errs = append(errs, fmt.Errorf("-sweep=%s: must be default or full", cfg.sweep))
	}
	seeds, err := parseSeeds(cfg.seedList)
	cfg.seeds = seeds
	errs = append(errs, err)
	ps, err := profilesNamed(cfg.profileList)
	cfg.profiles = ps
	errs = append(errs, err)
	harm, err := loadHarm(cfg.calibration)
	cfg.harm = harm
	if err != nil {
		errs = append(errs, fmt.Errorf("-calibration: %w", err)) // the error names the file
	}
	errs = append(errs, validateSignal(cfg))
	for name, d := range map[string]time.Duration{"-reclaim-window": cfg.settings.Window, "-reclaim-cpu-eviction-delay": cfg.settings.CPUEvictionDelay, "-usage-lag": cfg.lag, "-rate-window": cfg.rateWindow, "-online-window": cfg.onlineWindow} {
		if d%time.Minute != 0 || d < 0 {
			errs = append(errs, fmt.Errorf("%s=%s: must be whole minutes, the simulation's step", name, d))
		}
	}
	if cfg.rateWindow < time.Minute {
		errs = append(errs, fmt.Errorf("-rate-window=%s: must be at least 1m", cfg.rateWindow))
	}
	if cfg.notice < 0 || cfg.grace < 0 {
		errs = append(errs, fmt.Errorf("-stop-notice=%s, -grace-period=%s: must not be negative", cfg.notice, cfg.grace))
	}
	l := cfg.load
	if l.pdbBlocking < 0 || l.pdbOne < 0 || l.pdbBlocking+l.pdbOne > 1 || l.growing < 0 || l.growing > 1 {
		errs = append(errs, fmt.Errorf("-pdb-blocking=%g, -pdb-one=%g, -memory-growing=%g: must be shares from 0 to 1, the two budgets' together at most 1", l.pdbBlocking, l.pdbOne, l.growing))
	}
	errs = append(errs, agentSettingsValid(cfg.agent), cfg.settings.Validate())
	for _, withAgent := range []bool{false, true} {
		for _, s := range backfillSettings(cfg.sweep == "full", withAgent, cfg.settings) {
			if err := s.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("the sweep's %s: %w", backfillKnobs(s), err))
			}
		}
	}
	return errors.Join(errs...)
}

// validateSignal checks the online signal's flags and sets its window.
func validateSignal(cfg *config) error {
	var errs []error
	if o := cfg.signal.objective; o != 0 && o < 1 {
		errs = append(errs, fmt.Errorf("-online-objective=%g: must be at least 1 (the P99 alone) or 0 for no signal", o))
	}
	cfg.signal.window = int(cfg.onlineWindow / time.Minute)
	if cfg.onlineWindow < time.Minute || cfg.lag+cfg.onlineWindow > signalMemory*time.Minute {
		errs = append(errs, fmt.Errorf("-online-window=%s, -usage-lag=%s: the window must be at least 1m, the two together at most %dm", cfg.onlineWindow, cfg.lag, signalMemory))
	}
	return errors.Join(errs...)
}

// agentSettingsValid checks the agent's flags, and the thresholds the
// sweep sets with them, as the agent itself would.
func agentSettingsValid(a agentSettings) error {
	if err := a.settings().Validate(); err != nil {
		return fmt.Errorf("-agent-*: %w", err)
	}
	for _, th := range thresholdsSweptFull {
		for _, act := range []int{a.cpuActivation, 0} {
			swept := a
			swept.cpuThreshold, swept.cpuActivation = th, act
			if err := swept.settings().Validate(); th >= a.cpuFloor && err != nil {
				return fmt.Errorf("-agent-* with the sweep's threshold %d%%: %w", th, err)
			}
		}
	}
	return nil
}

func parseSeeds(list string) ([]uint64, error) {
	var seeds []uint64
	for f := range strings.SplitSeq(list, ",") {
		s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("-seeds=%s: want comma-separated whole numbers, e.g. 1,2,3", list)
		}
		seeds = append(seeds, s)
	}
	return seeds, nil
}
