package nodeagent

import (
	"errors"
	"fmt"
	"time"
)

// Settings are how the agent protects its node.
type Settings struct {
	// Interval is how often the agent measures and sets the ceiling.
	Interval time.Duration
	// CPUThreshold is the percent of the node's CPUs that online pods, the
	// system and offline pods may use together: offline pods get what the
	// others leave below it.
	CPUThreshold int
	// CPUActivation is the percent of the node's CPUs online pods and the
	// system must use together before the ceiling applies; until then, and
	// once it is released, offline pods run uncapped under the kernel's
	// weights. A CFS quota that binds costs online pods tail latency of its
	// own (bench-interference: P99 1.9× the baseline with a ceiling at
	// steady load against 1.2× without), and pays off only when online
	// work is heavy.
	CPUActivation int
	// CPUActivationBand is how many points below CPUActivation online and
	// system use must fall before the ceiling is released, and
	// CPUReleaseTicks for how many ticks in a row: without them a node
	// whose use hovers at the activation would have its offline pods'
	// quotas set and lifted every tick. Zero for both releases the ceiling
	// at the first tick below the activation.
	CPUActivationBand int
	CPUReleaseTicks   int
	// CPUFloor is the percent of the node's CPUs offline pods keep
	// whatever online pods use, so that training never stops outright.
	CPUFloor int
	// CPUGrowth is the most, in percent of the node's CPUs, the offline
	// ceiling grows per tick; it shrinks at once.
	CPUGrowth int
	// CPUIdle puts reclaimed pods in the scheduler's idle class (cpu.idle,
	// Linux 5.15 or later): a waking online thread preempts them at once
	// and takes a CPU they run on as if it were free. It does not wait for
	// CPUActivation: the kernel acts on it only when an online thread
	// wants a CPU that offline threads hold.
	CPUIdle bool
	// MemoryThreshold is the percent of the node's memory in use above
	// which offline pods are evicted, until use is 2 points below it; 0
	// turns memory evictions off.
	MemoryThreshold int
}

// DefaultSettings are the settings `make bench-interference` chose: see
// docs/performance.md.
func DefaultSettings() Settings {
	return Settings{
		Interval:          time.Second,
		CPUThreshold:      85,
		CPUActivation:     40,
		CPUActivationBand: 10,
		CPUReleaseTicks:   10,
		CPUFloor:          10,
		CPUGrowth:         10,
		CPUIdle:           true,
		MemoryThreshold:   90,
	}
}

// Validate says what is wrong with the settings and how to fix it.
func (s Settings) Validate() error {
	var errs []error
	if s.Interval < 100*time.Millisecond || s.Interval > time.Minute {
		errs = append(errs, fmt.Errorf("--interval=%s: must be from 100ms to 1m; the kubelet resets cgroups about once a minute and online pods need an answer within seconds", s.Interval))
	}
	if s.CPUThreshold < 1 || s.CPUThreshold > 100 {
		errs = append(errs, fmt.Errorf("--cpu-threshold=%d: must be a percent of the node's CPUs from 1 to 100", s.CPUThreshold))
	}
	if s.CPUActivation < 0 || s.CPUActivation > 100 {
		errs = append(errs, fmt.Errorf("--cpu-activation=%d: must be a percent of the node's CPUs from 0 (always) to 100", s.CPUActivation))
	}
	errs = append(errs, s.validateRelease())
	if s.CPUFloor < 0 || s.CPUFloor > s.CPUThreshold {
		errs = append(errs, fmt.Errorf("--cpu-floor=%d: must be from 0 to --cpu-threshold (%d)", s.CPUFloor, s.CPUThreshold))
	}
	if s.CPUGrowth < 1 || s.CPUGrowth > 100 {
		errs = append(errs, fmt.Errorf("--cpu-growth=%d: must be a percent of the node's CPUs from 1 to 100", s.CPUGrowth))
	}
	if s.MemoryThreshold != 0 && (s.MemoryThreshold < 10 || s.MemoryThreshold > 99) {
		errs = append(errs, fmt.Errorf("--memory-threshold=%d: must be a percent of the node's memory from 10 to 99, or 0 to turn memory evictions off", s.MemoryThreshold))
	}
	return errors.Join(errs...)
}

// validateRelease checks the activation's hysteresis.
func (s Settings) validateRelease() error {
	var errs []error
	switch {
	case s.CPUActivationBand < 0 || s.CPUActivationBand > 100:
		errs = append(errs, fmt.Errorf("--cpu-activation-band=%d: must be a number of percent points of the node's CPUs from 0 (no hysteresis) to 100", s.CPUActivationBand))
	case s.CPUActivation > 0 && s.CPUActivationBand >= s.CPUActivation:
		errs = append(errs, fmt.Errorf("--cpu-activation-band=%d: must be below --cpu-activation (%d), or a ceiling once set is never released; lower the band or raise the activation",
			s.CPUActivationBand, s.CPUActivation))
	}
	if s.CPUReleaseTicks < 0 || s.CPUReleaseTicks > 600 {
		errs = append(errs, fmt.Errorf("--cpu-release-ticks=%d: must be from 0 to 600 ticks of --interval, how long online and system use stay below the band before the ceiling is released (0 or 1: at the first tick)", s.CPUReleaseTicks))
	}
	return errors.Join(errs...)
}
