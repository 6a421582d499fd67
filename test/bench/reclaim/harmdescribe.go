package main

import (
	"fmt"
	"time"

	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// describe prints the harm model and the record it is calibrated on, for
// the report and the docs: which run, its points, the noise floor, and
// how far the model is from the record's other conditions.
func (h *harmModel) describe() []string {
	r := h.run
	lines := []string{
		"online latency: P99 inflation = 1 + fill x slope(online), per node-minute, at least online demand / CPU got;",
		"  fill = offline CPU / (capacity - online - system), 0-1; online = online CPU / capacity",
		fmt.Sprintf("  calibrated on %s: make bench-interference on %s, %s, %d rounds, agent %s",
			h.file, r.Machine, r.Date.UTC().Format(time.DateOnly), r.Rounds, r.Agent),
		"  slope between the record's conditions by online share (geometric between two positive slopes, else linear), flat beyond them;",
		"  each point: P99 ratio (median [95% interval]) over the fill, (ratio - 1) / fill:",
	}
	for p, curve := range h.curves {
		if len(curve) == 0 {
			lines = append(lines, fmt.Sprintf("  %-20s not in the record: read on the node agent's curve", protection(p).String()+":"))
			continue
		}
		for _, pt := range curve {
			iv := pt.cond.P99
			lines = append(lines, fmt.Sprintf("  %-20s level %2.0f%% %-18s online %.2f  %6.2fx [%.2f-%.2f]  fill %.2f  slope %.2f%s",
				protection(p).String()+":", 100*pt.level, pt.cond.Key, pt.online, iv.Median, iv.Lo, iv.Hi, pt.fill, pt.slope, engagedNote(pt.cond)))
		}
	}
	lines = append(lines, h.noiseFloor()...)
	lines = append(lines, h.others()...)
	lines = append(lines, "  backfill + agent reads the agent's curve every minute (idle class always, ceiling when engaged: the fill says how much it held);",
		"  Koordinator the cores curve whenever offline pods run (its cpuset suppress), or without cores the agent's when suppress binds;",
		"  backfill alone and priority only (Burstable offline, uncalibrated) the weights curve")
	return lines
}

// engagedNote says when the agent's ceiling applied in only part of a
// condition's ticks: its ratio mixes the ceiling with weights alone.
func engagedNote(c *calibration.Condition) string {
	if c.Protection != calibration.ProtectionAgent || c.Engaged >= 0.95 {
		return ""
	}
	return fmt.Sprintf(" (ceiling on in %.0f%% of ticks)", 100*c.Engaged)
}

// noiseFloor is the A/A conditions of each level: what the record cannot
// tell from no change.
func (h *harmModel) noiseFloor() []string {
	var out []string
	for _, l := range h.run.Levels {
		for _, k := range []string{calibration.KeyAloneAgain, calibration.KeyBurstAloneAgain} {
			if c := l.Find(k); c != nil {
				out = append(out, fmt.Sprintf("  noise floor:         level %2.0f%% %-18s %6.2fx [%.2f-%.2f] (the same condition twice)",
					100*l.Target, k, c.P99.Median, c.P99.Lo, c.P99.Hi))
			}
		}
	}
	return out
}

// others are the record's conditions the model is not calibrated on
// (other agent settings, other cpusets) beside what the model says of
// them at their online share and fill: a check, not a fit.
func (h *harmModel) others() []string {
	used := map[*calibration.Condition]bool{}
	for _, curve := range h.curves {
		for _, pt := range curve {
			used[pt.cond] = true
		}
	}
	var out []string
	for li := range h.run.Levels {
		l := &h.run.Levels[li]
		for i := range l.Conds {
			c := &l.Conds[i]
			p, ok := protectionOf(c.Protection)
			if used[c] || !ok || c.Measured() != nil {
				continue
			}
			out = append(out, fmt.Sprintf("  not calibrated on:   level %2.0f%% %-18s online %.2f  %6.2fx [%.2f-%.2f]  fill %.2f  the model: %.2fx on %s",
				100*l.Target, c.Key, c.Online.Median, c.P99.Median, c.P99.Lo, c.P99.Hi, c.Fill.Median,
				h.inflation(p, c.Online.Median, c.Fill.Median, 1), p))
		}
	}
	return out
}

// protectionOf is the protection a record names.
func protectionOf(recorded string) (protection, bool) {
	for p, pr := range protections {
		if pr.recorded == recorded {
			return protection(p), true
		}
	}
	return 0, false
}
