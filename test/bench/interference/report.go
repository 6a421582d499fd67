package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// The targets: online P99 with the agent at its defaults at most
// targetLowP99 of alone (median) and targetLowP99Hi (the interval's
// upper bound) at light load, targetHighP99 (upper bound) at heavy load;
// from 5 s after a burst's start, P99 within targetBurstRatio of the
// burst alone (upper bound); training keeps targetFill of the idle CPU at
// light load (lower bound).
const (
	targetLowP99     = 1.10
	targetLowP99Hi   = 1.20
	targetHighP99    = 1.25
	targetBurstRatio = 1.10
	targetFill       = 0.70
	// heavyLevel is the share of the node from which a level is heavy.
	heavyLevel = 0.5
)

// printReport prints the setup, a table per level, what the online
// threads went through, and the targets.
func printReport(out io.Writer, b *bench, a *analysis) {
	fmt.Fprintf(out, "\n== online latency beside offline training: %d rounds on %d CPUs, %s, kubelet cgroupfs layout under %s ==\n",
		a.rounds, b.cpus, b.hier, b.layout.sub)
	fmt.Fprintf(out, "online:  net/http on 127.0.0.1, %.2f ms of CPU a request (%d sha256 rounds of 1 KiB), Burstable pod requesting %.0f%% of the node (cpu.shares %d), no limit\n",
		ms(b.perHash)*float64(b.iterations), b.iterations, 100*onlineRequestShare, b.layout.online.shares)
	fmt.Fprintf(out, "load:    open loop from its own cgroup (%s) over %d keep-alive connections; client latency from each request's due time, server latency from reading the request to its last byte\n",
		loadGroup, b.cfg.connections)
	fmt.Fprintf(out, "offline: float64 matmul %d×%d on %d threads, BestEffort (cpu.shares %d): %.2f GFLOP/s alone, median [%.2f–%.2f]\n",
		b.cfg.matrix, b.cfg.matrix, b.cpus, bestEffortShare, a.offlineAlone.Median, a.offlineAlone.Lo, a.offlineAlone.Hi)
	fmt.Fprintf(out, "agent:   %s\n", agentString(b.cfg.agent))
	fmt.Fprintf(out, "order:   every condition once per round, shuffled (-seed %d); ratios are to the same round's online alone (a burst's to the burst alone); medians [bootstrap 95%% interval]\n", b.cfg.seed)
	fmt.Fprintf(out, "windows: rejected and measured again: %s (limits: outside the bench %.2f cores, steal %.2f cores)\n", rejectedString(b.rejected), b.cfg.maxOutside, b.cfg.maxSteal)
	for _, lr := range a.levels {
		printLevel(out, b, lr)
	}
	printTargets(out, a)
}

func printLevel(out io.Writer, b *bench, lr levelResult) {
	lvl := lr.lvl
	bursts := ""
	if b.cfg.bursts && lvl.bursts() {
		bursts = fmt.Sprintf("; bursts to %.0f/s (×%.2f) for %s", lvl.burstRate, lvl.burstRate/lvl.rate, b.cfg.burst)
	}
	fmt.Fprintf(out, "\n-- online at %s of the node: %.0f requests/s, %s windows (%d requests); online alone used %s of the node and left %s idle%s --\n",
		lvl, lvl.rate, lvl.window, lr.requests, share(lr.online), share(lr.idle), bursts)
	w, flush := newTable(out)
	fmt.Fprintln(w, "condition\tP99 ratio\tP99.9 ratio\tserver P99 ratio\tP50 / P99 / P99.9 ms\toffline speed\tfill of idle CPU\tceiling engaged\t")
	for _, c := range lr.conds {
		row := []string{c.cond.name, ratioCell(c.p99), ratioCell(c.p999), ratioCell(c.serverP99),
			fmt.Sprintf("%.2f / %.2f / %.2f", c.p50ms, c.p99ms, c.p999ms), "-", "-", "-"}
		if c.cond.key == keyAlone || c.cond.key == keyBurstAlone {
			row[1], row[2], row[3] = "reference", "reference", "reference"
		}
		if c.cond.offline {
			row[5], row[6] = shareCell(c.speed), shareCell(c.fill)
		}
		if c.cond.agent != nil {
			row[7] = fmt.Sprintf("%.0f%% of ticks, %.2f cores", 100*c.engaged, c.ceiling)
		}
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
	}
	flush()
	fmt.Fprintln(out, "\nwhere the time goes (medians; per request of the window):")
	w, flush = newTable(out)
	fmt.Fprintln(w, "condition\tonline CPU µs\tonline run-queue wait µs\tmigrations\tpreemptions\tCPU pressure some s/s (v2)\tv1 estimate s/s\tburst: P99 from 5 s\tburst: back within 1.10× after\t")
	for _, c := range lr.conds {
		row := []string{c.cond.name, fmt.Sprintf("%.0f", c.cpuUS), fmt.Sprintf("%.0f", c.waitUS), fmt.Sprintf("%.3f", c.migrations),
			fmt.Sprintf("%.3f", c.preempted), floatCell(c.pressure), floatCell(c.estimate), "-", "-"}
		if c.cond.burst && c.cond.key != keyBurstAlone {
			row[7] = ratioCell(c.afterBurst)
			row[8] = fmt.Sprintf("%.1f s [%.1f–%.1f]", c.recovery.Median, c.recovery.Lo, c.recovery.Hi)
		}
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
	}
	flush()
}

// printTargets judges the agent's conditions by their intervals, beside
// BestEffort alone and the A/A noise floor.
func printTargets(out io.Writer, a *analysis) {
	fmt.Fprintln(out, "\ntargets (node agent | BestEffort alone | A/A noise floor):")
	for _, lr := range a.levels {
		agent, be, aa := find(lr, calibration.KeyAgent), find(lr, calibration.KeyBestEffort), find(lr, calibration.KeyAloneAgain)
		heavy := lr.lvl.target >= heavyLevel
		judge := func(c *condResult) string {
			if c == nil {
				return "not measured"
			}
			ok := c.p99.Hi <= targetHighP99
			if !heavy {
				ok = c.p99.Median <= targetLowP99 && c.p99.Hi <= targetLowP99Hi
			}
			return metOrNot(ok) + " " + ratioCell(c.p99)
		}
		goal := fmt.Sprintf("median ≤ %.2f×, upper bound ≤ %.2f×", targetLowP99, targetLowP99Hi)
		if heavy {
			goal = fmt.Sprintf("upper bound ≤ %.2f×", targetHighP99)
		}
		fmt.Fprintf(out, "- %s, steady P99 (%s): %s | %s | %s\n", lr.lvl, goal, judge(agent), judge(be), ratioOrDash(aa))
		burstAgent, burstBE, burstAA := find(lr, calibration.KeyBurstAgent), find(lr, calibration.KeyBurstBestEffort), find(lr, calibration.KeyBurstAloneAgain)
		if burstAgent != nil {
			after := func(c *condResult) string {
				if c == nil {
					return "not measured"
				}
				return metOrNot(c.afterBurst.Hi <= targetBurstRatio) + " " + ratioCell(c.afterBurst)
			}
			fmt.Fprintf(out, "- %s, burst: P99 from 5 s after its start within %.2f× of the burst alone (upper bound): %s | %s | %s\n",
				lr.lvl, targetBurstRatio, after(burstAgent), after(burstBE), ratioOrDash(burstAA))
		}
		if !heavy && agent != nil {
			fmt.Fprintf(out, "- %s, offline fills ≥ %.0f%% of the idle CPU (lower bound): %s %s | %s\n",
				lr.lvl, 100*targetFill, metOrNot(agent.fill.Lo >= targetFill), shareCell(agent.fill), shareCell(be.fill))
		}
	}
}

func find(lr levelResult, key string) *condResult {
	for i := range lr.conds {
		if lr.conds[i].cond.key == key {
			return &lr.conds[i]
		}
	}
	return nil
}

func ratioOrDash(c *condResult) string {
	if c == nil {
		return "-"
	}
	return ratioCell(c.p99)
}

func ratioCell(i calibration.Interval) string {
	if math.IsNaN(i.Median) {
		return "-"
	}
	return fmt.Sprintf("%.2f× [%.2f–%.2f]", i.Median, i.Lo, i.Hi)
}

func shareCell(i calibration.Interval) string {
	if math.IsNaN(i.Median) {
		return "-"
	}
	return fmt.Sprintf("%.0f%% [%.0f–%.0f]", 100*i.Median, 100*i.Lo, 100*i.Hi)
}

func share(i calibration.Interval) string { return fmt.Sprintf("%.0f%%", 100*i.Median) }

func floatCell(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func rejectedString(r map[string]int) string {
	if len(r) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range r {
		parts = append(parts, fmt.Sprintf("%d for %s", v, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
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
