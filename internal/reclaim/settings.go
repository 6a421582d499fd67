package reclaim

import (
	"errors"
	"fmt"
	"time"
)

// Settings shape every node's decision. The manager's --reclaim-* flags
// set them; DefaultSettings documents the defaults.
type Settings struct {
	// Margin is the share of a node's capacity, per resource, kept free of
	// offline work: room for online use to rise between two decisions.
	Margin Percents
	// EvictionMargin is how much of the margin online use may take before
	// offline pods are evicted (down to the target, the margin whole
	// again): evicting at the first rise would stop training for room
	// online pods never miss.
	EvictionMargin Percents
	// CPUEvictionDelay is how long online CPU use must stay high before
	// offline pods are evicted for CPU. CPU is shared by weight: offline
	// pods, requesting no cpu, yield it to online pods at once, so a burst costs
	// them speed, not online pods latency; memory cannot be taken back, so
	// memory evictions wait for nothing.
	CPUEvictionDelay time.Duration
	// Window is how far back the online peak looks: a burst keeps the
	// reclaimed capacity down for this long after it.
	Window time.Duration
	// Interval is the time between two decisions.
	Interval time.Duration
	// GrowthPerMinute is how fast the published capacity may grow, in
	// percent of the node's capacity per minute; it shrinks at once.
	GrowthPerMinute int
	// MinChange, in percent of the node's capacity, is the smallest change
	// worth writing: small moves of online use change nothing.
	MinChange int
	// Cooldown is how long a node that evicted offers no room to new
	// offline pods, so that evicted work does not land back on it.
	Cooldown time.Duration
	// StaleAfter is the age of the newest usage sample past which a node's
	// capacity is frozen: no growth and no evictions on old data.
	StaleAfter time.Duration

	// OnlineCPUWait is how long, in seconds per second, a node's online
	// pods may wait for a CPU together before the node is held back as if
	// they missed their objective; 0 listens to latency only. A pod's
	// wait is the time during which at least one of its threads waited
	// (pressure stall information's "some", at most 1 s/s a pod), summed
	// over the node's online pods.
	OnlineCPUWait float64
	// OnlineStep is the share of a node's CPU, in percent, a held node
	// gives back at each step.
	OnlineStep int
	// OnlineEvictAfter is how long online pods must suffer before a held
	// node gives back a step by evicting: a blip stops growth only.
	OnlineEvictAfter time.Duration
	// OnlineRecoverAfter is how long the signal must stay healthy before
	// a held node grows again.
	OnlineRecoverAfter time.Duration
	// OnlineWindow is the rate window of the signal's queries, latency
	// and CPU wait: how far back one reading looks. Shorter than
	// OnlineEvictAfter, since a reading stays harmful for a window after
	// the harm ends: with a window as long, a blip would read as harm
	// that lasted and evict.
	OnlineWindow time.Duration
}

// DefaultSettings suit a cluster scraped every 30 s.
func DefaultSettings() Settings {
	return Settings{
		Margin:           Percents{CPU: 10, Memory: 20},
		EvictionMargin:   Percents{CPU: 5, Memory: 5},
		CPUEvictionDelay: 15 * time.Minute,
		Window:           15 * time.Minute,
		Interval:         15 * time.Second,
		GrowthPerMinute:  10,
		MinChange:        2,
		Cooldown:         5 * time.Minute,
		StaleAfter:       3 * time.Minute,

		OnlineCPUWait:      0.1,
		OnlineStep:         10,
		OnlineEvictAfter:   2 * time.Minute,
		OnlineRecoverAfter: 10 * time.Minute,
		OnlineWindow:       time.Minute,
	}
}

// Validate says which setting is wrong, by the manager flag that sets it.
func (s Settings) Validate() error {
	var errs []error
	if s.Margin.CPU < 0 || s.Margin.CPU > 99 {
		errs = append(errs, fmt.Errorf("--reclaim-cpu-margin=%d: must be a percent of a node's capacity from 0 to 99", s.Margin.CPU))
	}
	if s.Margin.Memory < 0 || s.Margin.Memory > 99 {
		errs = append(errs, fmt.Errorf("--reclaim-memory-margin=%d: must be a percent of a node's capacity from 0 to 99", s.Margin.Memory))
	}
	if s.EvictionMargin.CPU < 0 || s.EvictionMargin.CPU > s.Margin.CPU {
		errs = append(errs, fmt.Errorf("--reclaim-cpu-eviction-margin=%d: must be from 0 to --reclaim-cpu-margin (%d)", s.EvictionMargin.CPU, s.Margin.CPU))
	}
	if s.EvictionMargin.Memory < 0 || s.EvictionMargin.Memory > s.Margin.Memory {
		errs = append(errs, fmt.Errorf("--reclaim-memory-eviction-margin=%d: must be from 0 to --reclaim-memory-margin (%d)", s.EvictionMargin.Memory, s.Margin.Memory))
	}
	if s.CPUEvictionDelay < 0 || s.CPUEvictionDelay > s.Window {
		errs = append(errs, fmt.Errorf("--reclaim-cpu-eviction-delay=%v: must be from 0 to --reclaim-window (%v)", s.CPUEvictionDelay, s.Window))
	}
	if s.Interval <= 0 {
		errs = append(errs, fmt.Errorf("--reclaim-interval=%v: must be positive, e.g. 15s", s.Interval))
	}
	if s.Window < s.Interval {
		errs = append(errs, fmt.Errorf("--reclaim-window=%v: must be at least --reclaim-interval (%v), e.g. 15m", s.Window, s.Interval))
	}
	if s.GrowthPerMinute < 1 || s.GrowthPerMinute > 10000 {
		errs = append(errs, fmt.Errorf("--reclaim-growth-per-minute=%d: must be from 1 to 10000 percent of a node's capacity", s.GrowthPerMinute))
	}
	if s.MinChange < 0 || s.MinChange > 50 {
		errs = append(errs, fmt.Errorf("--reclaim-min-change=%d: must be from 0 to 50 percent of a node's capacity", s.MinChange))
	}
	if s.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("--reclaim-cooldown=%v: must not be negative", s.Cooldown))
	}
	if s.StaleAfter < s.Interval {
		errs = append(errs, fmt.Errorf("--reclaim-stale-after=%v: must be at least --reclaim-interval (%v)", s.StaleAfter, s.Interval))
	}
	if s.OnlineCPUWait < 0 {
		errs = append(errs, fmt.Errorf("--reclaim-online-cpu-wait=%v: must not be negative; 0 listens to latency only", s.OnlineCPUWait))
	}
	if s.OnlineStep < 1 || s.OnlineStep > 100 {
		errs = append(errs, fmt.Errorf("--reclaim-online-step=%d: must be from 1 to 100 percent of a node's CPU", s.OnlineStep))
	}
	if s.OnlineEvictAfter < 0 {
		errs = append(errs, fmt.Errorf("--reclaim-online-evict-after=%v: must not be negative, e.g. 2m", s.OnlineEvictAfter))
	}
	if s.OnlineRecoverAfter < s.Interval {
		errs = append(errs, fmt.Errorf("--reclaim-online-recover-after=%v: must be at least --reclaim-interval (%v), e.g. 10m", s.OnlineRecoverAfter, s.Interval))
	}
	return errors.Join(append(errs, s.validateOnlineWindow())...)
}

// validateOnlineWindow checks the online signal's rate window against
// evict-after: a reading stays harmful for a window after the harm ends.
func (s Settings) validateOnlineWindow() error {
	if s.OnlineWindow < time.Second {
		return fmt.Errorf("--reclaim-online-window=%v: must be at least 1s, and at least two of Prometheus's scrape intervals, e.g. 1m", s.OnlineWindow)
	}
	if s.OnlineWindow >= s.OnlineEvictAfter {
		return fmt.Errorf("--reclaim-online-window=%v is not shorter than --reclaim-online-evict-after=%v: a reading of the online signal stays harmful for a window after the harm ends, "+
			"so a blip would read as harm that lasted and evict; shorten --reclaim-online-window or lengthen --reclaim-online-evict-after (the defaults are 1m and 2m)", s.OnlineWindow, s.OnlineEvictAfter)
	}
	return nil
}

// Percents are a percentage per resource.
type Percents struct {
	CPU    int `json:"cpu"`
	Memory int `json:"memory"`
}

// of is p of r, rounded down.
func (p Percents) of(r Resources) Resources { return r.Percent(p.CPU, p.Memory) }
