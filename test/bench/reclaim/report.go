package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printReport prints the model and the table of the policies, one column
// each.
func printReport(out io.Writer, cfg config, sums []summary) {
	set, spec := cfg.settings, defaultNodeSpec()
	fmt.Fprintf(out, "\n== reclaimed capacity: %d nodes x %d days at 1-minute steps, seed %d ==\n", cfg.nodes, cfg.days, cfg.seed)
	fmt.Fprintf(out, "nodes:    %g CPU / %g GiB, kubelet reserved %g CPU / %g GiB; online pods request %.0f-%.0f%% of capacity\n",
		spec.capacity.cpu, spec.capacity.memory, spec.reserved.cpu, spec.reserved.memory, 100*requestShareMin, 100*requestShareMax)
	fmt.Fprintf(out, "backfill: reclaim.Decide with margin cpu %d%% / memory %d%%, window %s, interval %s, growth %d%%/min, min change %d%%, cool-down %s\n",
		set.Margin.CPU, set.Margin.Memory, set.Window, set.Interval, set.GrowthPerMinute, set.MinChange, set.Cooldown)
	fmt.Fprintf(out, "online pods alone used %.1f%% of allocatable CPU on average\n\n", sums[0].onlineCPUMean)

	w, flush := newTable(out)
	cells := func(what string, f func(summary) string) {
		row := []string{what}
		for _, s := range sums {
			row = append(row, f(s))
		}
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
	}
	cells("", func(s summary) string { return s.policy })
	cells("CPU utilisation, mean / p50 (used / allocatable)", func(s summary) string { return fmt.Sprintf("%.1f%% / %.1f%%", s.cpuMean, s.cpuP50) })
	cells("memory utilisation, mean / p50", func(s summary) string { return fmt.Sprintf("%.1f%% / %.1f%%", s.memMean, s.memP50) })
	cells("online demand unmet, node-minutes (cpu / memory)", func(s summary) string {
		return fmt.Sprintf("%d = %.3f%% (%.3f%% / %.3f%%)", s.unmetCount, s.unmet, s.cpuUnmet, s.memoryUnmet)
	})
	cells(fmt.Sprintf("node CPU above %.0f%% of capacity, node-minutes", 100*highWatermark), func(s summary) string {
		return fmt.Sprintf("%d = %.3f%%", s.hotCount, s.hot)
	})
	cells("evictions per node-day", func(s summary) string { return fmt.Sprintf("%.2f", s.evictionsPerNodeDay) })
	cells("training work lost to evictions, replica-hours", func(s summary) string { return fmt.Sprintf("%.1f", s.lostToEvictions) })
	cells("OOM kills / work lost to them, replica-hours", func(s summary) string { return fmt.Sprintf("%.0f / %.1f", s.oomKills, s.lostToOOM) })
	cells("training work done and kept, replica-hours", func(s summary) string { return fmt.Sprintf("%.0f", s.work) })
	cells("recovery after disruptions, replica-hours", func(s summary) string { return fmt.Sprintf("%.1f", s.recovery) })
	cells("goodput: kept work / (replica-time run + recovering)", func(s summary) string { return fmt.Sprintf("%.2f%%", s.goodput) })
	cells("jobs finished", func(s summary) string { return fmt.Sprintf("%d", s.finished) })
	flush()
}

// newTable aligns columns two spaces apart; flush prints the table
// without trailing blanks.
func newTable(out io.Writer) (w *tabwriter.Writer, flush func()) {
	var buf bytes.Buffer
	w = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	return w, func() {
		_ = w.Flush()
		for _, line := range strings.SplitAfter(buf.String(), "\n") {
			if line != "" {
				fmt.Fprintln(out, strings.TrimRight(line, " \n"))
			}
		}
	}
}
