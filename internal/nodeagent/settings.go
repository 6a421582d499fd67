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
	// CPUFloor is the percent of the node's CPUs offline pods keep
	// whatever online pods use, so that training never stops outright.
	CPUFloor int
	// CPUGrowth is the most, in percent of the node's CPUs, the offline
	// ceiling grows per tick; it shrinks at once.
	CPUGrowth int
	// MemoryThreshold is the percent of the node's memory in use above
	// which offline pods are evicted, until use is 2 points below it; 0
	// turns memory evictions off.
	MemoryThreshold int
}

// DefaultSettings are the settings `make bench-interference` chose: see
// docs/performance.md.
func DefaultSettings() Settings {
	return Settings{
		Interval:        time.Second,
		CPUThreshold:    85,
		CPUFloor:        10,
		CPUGrowth:       10,
		MemoryThreshold: 90,
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
