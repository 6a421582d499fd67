package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"

	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// protection is how a node's offline pods are kept off online CPU in a
// minute: by the kernel's CPU weights alone, under the node agent (its
// idle class and CPU ceiling; a CFS quota that binds reads the same), or
// on CPU cores of their own (Koordinator's cpuset suppress).
type protection int

const (
	byWeights protection = iota
	byAgent
	byCores
)

// protections are, per protection, what it is called and the conditions
// of an interference record that calibrate it: the steady and burst keys
// every run measures, or (cores, a sweep condition) the first condition
// with its protection at each level.
var protections = [...]struct {
	name, recorded, steady, burst string
}{
	byWeights: {"CPU weights alone", calibration.ProtectionWeights, calibration.KeyBestEffort, calibration.KeyBurstBestEffort},
	byAgent:   {"the node agent", calibration.ProtectionAgent, calibration.KeyAgent, calibration.KeyBurstAgent},
	byCores:   {"cores of their own", calibration.ProtectionCores, "", ""},
}

func (p protection) String() string { return protections[p].name }

// harmPoint is one condition of the record a curve passes through: online
// pods' P99 beside training over their P99 alone (a burst's over the
// burst alone), at the share of the node's CPU online pods used and the
// share of the idle CPU offline pods took.
type harmPoint struct {
	level                      float64 // the level's target online share
	cond                       *calibration.Condition
	online, fill, ratio, slope float64
}

// harmCurve is a protection's points by online share.
type harmCurve []harmPoint

// harmModel is online pods' P99 inflation in a node-minute, calibrated on
// one run of `make bench-interference`.
type harmModel struct {
	file   string
	run    *calibration.Run
	curves [len(protections)]harmCurve
}

// loadHarm reads the record at path and builds the model from it.
func loadHarm(path string) (*harmModel, error) {
	run, err := calibration.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (the default is relative to the repository's root; make bench-interference records a new one)", err)
	}
	if err != nil {
		return nil, err
	}
	return newHarm(path, run)
}

// newHarm builds the model from a record: the weights and agent curves
// from the conditions every run measures, the cores curve from the
// record's cpuset conditions if it has any.
func newHarm(file string, run *calibration.Run) (*harmModel, error) {
	err := errors.Join(run.Require(calibration.KeyBestEffort, calibration.KeyAgent),
		run.RequireBursts(calibration.KeyBurstBestEffort, calibration.KeyBurstAgent))
	if err != nil {
		return nil, fmt.Errorf("%s cannot calibrate the online harm (make bench-interference records every condition it needs): %w", file, err)
	}
	h := &harmModel{file: file, run: run}
	var errs []error
	for p, pr := range protections {
		for i := range run.Levels {
			l := &run.Levels[i]
			for _, c := range conditionsOf(l, pr.recorded, pr.steady, pr.burst) {
				if err := c.Measured(); err != nil {
					errs = append(errs, fmt.Errorf("level %.0f%%: %w", 100*l.Target, err))
					continue
				}
				h.curves[p] = append(h.curves[p], harmPointOf(l.Target, c))
			}
		}
		slices.SortStableFunc(h.curves[p], func(a, b harmPoint) int { return cmp.Compare(a.online, b.online) })
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%s cannot calibrate the online harm: %w", file, err)
	}
	return h, nil
}

// conditionsOf are the level's conditions of keys steady and burst, or
// with no keys, its first steady and first burst condition of the
// protection recorded.
func conditionsOf(l *calibration.Level, recorded, steady, burst string) []*calibration.Condition {
	var out []*calibration.Condition
	if steady != "" {
		for _, k := range []string{steady, burst} {
			if c := l.Find(k); c != nil {
				out = append(out, c)
			}
		}
		return out
	}
	for _, b := range []bool{false, true} {
		if cs := l.WithProtection(recorded, b); len(cs) > 0 {
			out = append(out, cs[0])
		}
	}
	return out
}

// harmPointOf is a condition as a point of its curve. A ratio below 1 (noise)
// counts as no harm; the slope is over the fill the model reads, at most
// 1, so that the curve passes through the condition.
func harmPointOf(level float64, c *calibration.Condition) harmPoint {
	ratio := max(1, c.P99.Median)
	return harmPoint{level: level, cond: c, online: c.Online.Median, fill: c.Fill.Median, ratio: c.P99.Median,
		slope: (ratio - 1) / min(1, c.Fill.Median)}
}

// has says whether the record calibrates protection p.
func (h *harmModel) has(p protection) bool { return len(h.curves[p]) > 0 }

// slope is the inflation per unit of fill at an online share: between two
// points of the curve geometric when both slopes are positive, else
// linear; flat beyond the first and last (no data there).
func (c harmCurve) slope(online float64) float64 {
	first, last := c[0], c[len(c)-1]
	if online <= first.online {
		return first.slope
	}
	if online >= last.online {
		return last.slope
	}
	i, _ := slices.BinarySearchFunc(c, online, func(p harmPoint, u float64) int { return cmp.Compare(p.online, u) })
	lo, hi := c[i-1], c[i]
	f := (online - lo.online) / (hi.online - lo.online)
	if lo.slope > 0 && hi.slope > 0 {
		return lo.slope * math.Pow(hi.slope/lo.slope, f)
	}
	return lo.slope + f*(hi.slope-lo.slope)
}

// inflation is online pods' P99 over their P99 alone in a node-minute:
// 1 + fill x slope(online), where online is the share of the node's CPU
// online pods used and fill the share of the CPU they and the system left
// idle that offline pods took. Online pods short of CPU (demand above
// what they got) wait at least in proportion. A record without cores
// conditions reads cores on the agent's curve, a ceiling too.
func (h *harmModel) inflation(p protection, online, fill, starved float64) float64 {
	if !h.has(p) {
		p = byAgent
	}
	x := 1 + min(1, max(0, fill))*h.curves[p].slope(online)
	return max(x, starved)
}

// driftTolerance is how far, as a share of its median, the model may miss
// a condition whose interval is narrower: a record rounds its figures.
const driftTolerance = 0.01

// drift says, for every condition of the record the model is calibrated
// on, where its inflation at the condition's online share and fill falls
// outside the condition's 95% interval.
func (h *harmModel) drift() []string {
	var out []string
	for p, pr := range protections {
		for i := range h.run.Levels {
			l := &h.run.Levels[i]
			for _, c := range conditionsOf(l, pr.recorded, pr.steady, pr.burst) {
				got := h.inflation(protection(p), c.Online.Median, c.Fill.Median, 1)
				iv := c.P99
				slack := driftTolerance * iv.Median
				if got < min(iv.Lo, iv.Median-slack) || got > max(iv.Hi, iv.Median+slack) {
					out = append(out, fmt.Sprintf("%s, level %.0f%%, %s: the model gives %.3fx at online %.3f and fill %.3f, the record %.3fx [%.3f-%.3f]",
						protection(p), 100*l.Target, c.Key, got, c.Online.Median, c.Fill.Median, iv.Median, iv.Lo, iv.Hi))
				}
			}
		}
	}
	return out
}
