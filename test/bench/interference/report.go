package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// The targets.
const (
	targetP99Ratio   = 1.10
	targetRecovery   = 5 * time.Second
	targetIdleShared = 0.70
)

// printReport prints the setup, one line per scenario and the targets.
func printReport(out io.Writer, b *bench, res *results) {
	base, burst := res.baseline(), res.burstAlone()
	alone := res.offlineAlone
	fmt.Fprintf(out, "\n== online latency beside offline training, on this machine's cgroups: %d CPUs, %s, kubelet cgroupfs layout under %s ==\n",
		b.cpus, b.hier, b.layout.sub)
	fmt.Fprintf(out, "online:  net/http on 127.0.0.1, %.2f ms of CPU a request (%d sha256 rounds of 1 KiB at %s), %d req/s open loop (vegeta) from outside kubepods; burst ×%d for %s\n",
		ms(time.Duration(b.iterations)*b.perHash), b.iterations, b.perHash, b.cfg.rate, b.cfg.burstFactor, b.cfg.burst)
	fmt.Fprintf(out, "         Burstable pod requesting 1 CPU (cpu.shares %d), no limit\n", b.layout.online.shares)
	fmt.Fprintf(out, "offline: float64 matmul %d×%d in %d-blocks on %d threads: %.2f GFLOP/s alone on %.2f cores; BestEffort (cpu.shares %d) or Burstable at the online pod's weight (%d)\n",
		b.cfg.matrix, b.cfg.matrix, b.cfg.block, b.cpus, alone.gflops, alone.cores.offline, b.layout.offline.shares, b.layout.sameWeight.shares)
	fmt.Fprintf(out, "idle:    at steady load online used %.2f cores and the system %.2f (the bench's load generator %.2f): %.2f idle;\n",
		base.cores.online, base.cores.system, base.cores.bench, idle(b, base))
	fmt.Fprintf(out, "         during a burst alone %.2f and %.2f (%.2f): %.2f idle\n", burst.cores.online, burst.cores.system, burst.cores.bench, idle(b, burst))
	fmt.Fprintf(out, "agent:   %s\n", b.cfg.agent.String())
	fmt.Fprintf(out, "measured %s per steady scenario, %s per burst (from its start); recovery: when P99 over 1 s windows stays within %.2f× the baseline's\n\n",
		b.cfg.steady, b.cfg.burst, targetP99Ratio)

	w, flush := newTable(out)
	fmt.Fprintln(w, "scenario\tP50 ms\tP99 ms\tP99.9 ms\toffline vs alone\toffline / idle CPU\trecovery\t")
	var failed, disturbed []string
	for _, r := range res.runs {
		ref := base
		if r.sc.burst {
			ref = burst
		}
		row := []string{
			r.sc.name,
			latencyCell(r.lat.p50, base.lat.p50),
			latencyCell(r.lat.p99, base.lat.p99),
			latencyCell(r.lat.p999, base.lat.p999),
			"-", "-", "-",
		}
		if r.sc.offline != nil {
			row[4] = percent(r.gflops / alone.gflops)
			row[5] = idleCell(r.cores.offline, idle(b, ref))
		}
		if r.sc.burst {
			row[6] = recoveryCell(recoveryOf(r.p99, targetP99Ratio*ms(base.lat.p99), targetRecovery), b.cfg.burst)
		}
		if other := r.cores.system - r.cores.bench; other > quietCores {
			row[0] += " (*)"
			disturbed = append(disturbed, fmt.Sprintf("%s: %.2f cores", r.sc.name, other))
		}
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
		if r.lat.failed > 0 {
			failed = append(failed, fmt.Sprintf("%s: %d of %d", r.sc.name, r.lat.failed, r.lat.requests))
		}
	}
	flush()
	if len(disturbed) > 0 {
		fmt.Fprintf(out, "(*) not a valid measurement: something outside the bench used CPU meanwhile (%s)\n", strings.Join(disturbed, "; "))
	}
	if len(failed) > 0 {
		fmt.Fprintf(out, "failed requests (counted with the time they took to fail): %s\n", strings.Join(failed, "; "))
	}
	printTargets(out, b, res)
}

// printTargets says, per target of the issue, whether the agent meets it
// and whether BestEffort alone already does.
func printTargets(out io.Writer, b *bench, res *results) {
	base := res.baseline()
	steady := func(agent bool) result {
		return res.find(func(s scenario) bool { return !s.burst && s.offline == b.layout.offline && s.agent == agent })
	}
	bursty := func(agent bool) result {
		return res.find(func(s scenario) bool { return s.burst && s.offline != nil && s.agent == agent })
	}
	bound := targetP99Ratio * ms(base.lat.p99)
	fmt.Fprintf(out, "\ntargets of issue 23 (with the node agent | BestEffort alone):\n")
	p99 := func(r result) string {
		ratio := ms(r.lat.p99) / ms(base.lat.p99)
		return fmt.Sprintf("%s (%.2f×)", metOrNot(ratio <= targetP99Ratio), ratio)
	}
	fmt.Fprintf(out, "- online P99 ≤ %.2f× the baseline at steady load: %s | %s\n", targetP99Ratio, p99(steady(true)), p99(steady(false)))
	rec := func(r result) string {
		rc := recoveryOf(r.p99, bound, targetRecovery)
		ok := rc.recovered && rc.after <= targetRecovery
		return fmt.Sprintf("%s (%s)", metOrNot(ok), recoveryCell(rc, b.cfg.burst))
	}
	fmt.Fprintf(out, "- online P99 ≤ %.2f× the baseline again within %s of a burst's start: %s | %s\n", targetP99Ratio, targetRecovery, rec(bursty(true)), rec(bursty(false)))
	shared := func(r result) string {
		id := idle(b, base)
		if id < noIdle {
			return fmt.Sprintf("NOT met (online and the system left %.2f cores idle)", id)
		}
		s := r.cores.offline / id
		return fmt.Sprintf("%s (%.0f%%: %.2f of %.2f idle cores)", metOrNot(s >= targetIdleShared), 100*s, r.cores.offline, id)
	}
	fmt.Fprintf(out, "- offline uses ≥ %.0f%% of the CPU online leaves idle, at steady load: %s | %s\n", 100*targetIdleShared, shared(steady(true)), shared(steady(false)))
}

// noIdle is too little idle CPU to share: the noise of the measurement.
const noIdle = 0.05

// idle is the CPU online and the system left unused in r.
func idle(b *bench, r result) float64 {
	return max(0, float64(b.cpus)-r.cores.online-r.cores.system)
}

func latencyCell(d, base time.Duration) string {
	if base <= 0 {
		return fmt.Sprintf("%.2f", ms(d))
	}
	return fmt.Sprintf("%.2f  %.2f×", ms(d), float64(d)/float64(base))
}

func idleCell(offline, idle float64) string {
	if idle < noIdle {
		return fmt.Sprintf("%.2f cores (none idle)", offline)
	}
	return fmt.Sprintf("%s of %.2f cores", percent(offline/idle), idle)
}

func recoveryCell(r recovery, burst time.Duration) string {
	over := ""
	if r.late > 0 {
		over = fmt.Sprintf("; %.0f%% of windows over after %s", 100*r.overLate, targetRecovery)
	}
	switch {
	case !r.recovered:
		return fmt.Sprintf("not within the %s burst%s", burst, over)
	case r.after == 0:
		return "0 s, never over"
	default:
		return fmt.Sprintf("%.1f s%s", r.after.Seconds(), over)
	}
}

func percent(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

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
