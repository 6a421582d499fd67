// Package calibration is the record of one `make bench-interference`
// run: online latency beside training on a real machine's cgroups, per
// online load level and per way of protecting online pods, each figure a
// median over rounds with its bootstrap 95% interval. The interference
// bench writes it; `make bench-reclaim` reads it to calibrate the online
// harm of its frontier simulation.
package calibration

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// The ways online pods are protected from offline pods in a condition,
// the values of Condition.Protection.
const (
	// ProtectionNone: online pods alone, no offline pod.
	ProtectionNone = "none"
	// ProtectionWeights: offline BestEffort, the kernel's CPU weights
	// alone (cpu.shares 2 against the online pod's request).
	ProtectionWeights = "weights"
	// ProtectionAgent: offline BestEffort under the node agent (its CPU
	// ceiling and, if set, cpu.idle); Condition.Engaged says how often its
	// ceiling applied.
	ProtectionAgent = "agent"
	// ProtectionCores: offline on CPU cores of its own, online pods on
	// the others (a cpuset split); the load generator, as the node's
	// daemons, on any.
	ProtectionCores = "cores"
)

// The keys of the conditions every run measures at each level; sweep
// conditions have keys of their own ("agent cpu-threshold=70").
const (
	KeyAloneAgain      = "alone-again"
	KeyBestEffort      = "besteffort"
	KeyAgent           = "agent"
	KeyBurstAloneAgain = "burst-alone-again"
	KeyBurstBestEffort = "burst-besteffort"
	KeyBurstAgent      = "burst-agent"
)

// Run is one run of the interference bench.
type Run struct {
	Machine Machine   `json:"machine"`
	Date    time.Time `json:"date"`
	// Command is the bench's command line.
	Command string `json:"command"`
	Rounds  int    `json:"rounds"`
	// Rejected counts the windows rejected and measured again, by reason.
	Rejected map[string]int `json:"rejected"`
	// Agent are the node agent's settings of the agent conditions, as
	// flags ("--cpu-threshold=85 ...").
	Agent  string  `json:"agent"`
	Levels []Level `json:"levels"`
}

// Machine is where the run was measured.
type Machine struct {
	CPUs       int    `json:"cpus"`
	Model      string `json:"model"`
	Kernel     string `json:"kernel"`
	Cgroup     string `json:"cgroup"`
	Hypervisor string `json:"hypervisor,omitempty"`
}

// Level is one online load level: its conditions' figures are ratios to
// the same round's online alone at that load (a burst's to the burst
// alone).
type Level struct {
	// Target is the share of the node's CPU the online service was meant
	// to use, 0-1; Online what it used alone (median over rounds).
	Target float64 `json:"target"`
	Online float64 `json:"online"`
	// Idle is the share of the node's CPU online pods and the system left
	// idle alone: what offline pods may fill.
	Idle float64 `json:"idle"`
	// Rate and BurstRate are the online requests per second.
	Rate      float64     `json:"rate"`
	BurstRate float64     `json:"burstRate"`
	Requests  int         `json:"requests"`
	Conds     []Condition `json:"conditions"`
}

// Condition is one measured condition at a level.
type Condition struct {
	Key        string `json:"key"`
	Name       string `json:"name"`
	Protection string `json:"protection"`
	Burst      bool   `json:"burst,omitempty"`
	// P99, P999 and ServerP99 are latency ratios: the client's from each
	// request's scheduled send time, the server's from reading the
	// request to its last byte written. A burst's P99 is of the requests
	// due from 5 s after the burst's start, to the burst alone's; its
	// P999 and ServerP99 are of the whole burst.
	P99       Interval `json:"p99"`
	P999      Interval `json:"p999"`
	ServerP99 Interval `json:"serverP99"`
	// Online is the share of the node's CPU online pods used.
	Online Interval `json:"online"`
	// Fill is offline CPU over the idle CPU of the round's online alone.
	Fill Interval `json:"fill"`
	// Speed is offline throughput over the round's offline alone.
	Speed Interval `json:"speed"`
	// Engaged is the share of the agent's ticks with its ceiling applied.
	Engaged float64 `json:"engaged,omitempty"`
}

// Interval is a median over rounds with its bootstrap 95% interval, and
// the rounds' values.
type Interval struct {
	Median float64   `json:"median"`
	Lo     float64   `json:"lo"`
	Hi     float64   `json:"hi"`
	Rounds []float64 `json:"rounds,omitempty"`
}

// Load reads and checks a run's record.
func Load(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the interference calibration: %w", err)
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not an interference calibration (make bench-interference writes one): %w", path, err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Write writes the record as indented JSON.
func (r *Run) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Validate says what a record lacks to calibrate anything.
func (r *Run) Validate() error {
	var errs []error
	if r.Machine.CPUs < 1 || r.Date.IsZero() {
		errs = append(errs, errors.New("no machine or date: which run is this?"))
	}
	if len(r.Levels) == 0 {
		errs = append(errs, errors.New("no load levels"))
	}
	for _, l := range r.Levels {
		if l.Online <= 0 || l.Online >= 1 {
			errs = append(errs, fmt.Errorf("level %.0f%%: online share %.3f is not between 0 and 1", 100*l.Target, l.Online))
		}
		for _, c := range l.Conds {
			if c.P99.Median <= 0 {
				errs = append(errs, fmt.Errorf("level %.0f%%, %s: no P99 ratio", 100*l.Target, c.Key))
			}
		}
	}
	return errors.Join(errs...)
}

// Find is the condition of key at the level, nil if it was not measured.
func (l *Level) Find(key string) *Condition {
	for i := range l.Conds {
		if l.Conds[i].Key == key {
			return &l.Conds[i]
		}
	}
	return nil
}
