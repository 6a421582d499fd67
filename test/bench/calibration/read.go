package calibration

import (
	"errors"
	"fmt"
	"strings"
)

// What a reader of a record finds in it: which run it is, and the
// conditions it needs with the figures it needs.

// String names the machine in a line: "2 CPUs, Intel Xeon (amd64),
// Linux 6.1.0, cgroup v2, hypervisor yes".
func (m Machine) String() string {
	parts := []string{fmt.Sprintf("%d CPUs", m.CPUs)}
	for _, f := range []struct{ prefix, value string }{{"", m.Model}, {"Linux ", m.Kernel}, {"cgroup ", m.Cgroup}, {"hypervisor ", m.Hypervisor}} {
		if f.value != "" {
			parts = append(parts, f.prefix+f.value)
		}
	}
	return strings.Join(parts, ", ")
}

// Require says, per level, which of keys the record lacks, or has without
// a median P99 ratio, online share or fill: what a model of latency
// against load and fill cannot do without.
func (r *Run) Require(keys ...string) error {
	return r.require(r.Levels, keys)
}

// RequireBursts is Require of burst conditions, at the levels that
// measured bursts: a level where the node held no burst has none. At
// least one level must have.
func (r *Run) RequireBursts(keys ...string) error {
	var levels []Level
	for _, l := range r.Levels {
		if l.hasBursts() {
			levels = append(levels, l)
		}
	}
	if len(levels) == 0 {
		return fmt.Errorf("no level measured bursts (conditions %s)", strings.Join(keys, ", "))
	}
	return r.require(levels, keys)
}

func (l *Level) hasBursts() bool {
	for _, c := range l.Conds {
		if c.Burst {
			return true
		}
	}
	return false
}

func (r *Run) require(levels []Level, keys []string) error {
	var errs []error
	for _, l := range levels {
		for _, k := range keys {
			c := l.Find(k)
			if c == nil {
				errs = append(errs, fmt.Errorf("level %.0f%%: no condition %q", 100*l.Target, k))
				continue
			}
			if err := c.Measured(); err != nil {
				errs = append(errs, fmt.Errorf("level %.0f%%: %w", 100*l.Target, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Measured says which of the figures a latency model reads the condition
// lacks: its P99 ratio, its online share and its fill, as medians.
func (c *Condition) Measured() error {
	var missing []string
	if c.P99.Median <= 0 {
		missing = append(missing, "p99")
	}
	if c.Online.Median <= 0 {
		missing = append(missing, "online")
	}
	if c.Fill.Median <= 0 && c.Protection != ProtectionNone {
		missing = append(missing, "fill")
	}
	if len(missing) > 0 {
		return fmt.Errorf("condition %q: no median %s", c.Key, strings.Join(missing, ", "))
	}
	return nil
}

// WithProtection are the conditions of the level protected by p, steady
// or bursts.
func (l *Level) WithProtection(p string, burst bool) []*Condition {
	var out []*Condition
	for i := range l.Conds {
		if c := &l.Conds[i]; c.Protection == p && c.Burst == burst {
			out = append(out, c)
		}
	}
	return out
}
