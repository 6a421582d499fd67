package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// printModel prints what the run simulates, so that a table is never read
// without its assumptions.
func printModel(out io.Writer, cfg config, vs []variant) {
	spec, set, a, real := defaultNodeSpec(), cfg.settings, cfg.agent, cfg.realism()
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("\n== co-location policies: %d nodes x %d days at 1-minute steps, seeds %s, %d variants ==", cfg.nodes, cfg.days, cfg.seedList, len(vs))
	p("nodes:    %g CPU / %g GiB, kubelet reserved %g CPU / %g GiB, system use %g CPU / %g GiB; online pods request %.0f-%.0f%% of capacity",
		spec.capacity.cpu, spec.capacity.memory, spec.reserved.cpu, spec.reserved.memory, spec.system.cpu, spec.system.memory, 100*requestShareMin, 100*requestShareMax)
	for _, pr := range cfg.profiles {
		p("profile:  %-11s %s; %.0f%% of bursts longer than 15 min", pr.name, pr.about, 100*pr.durations.longerThan(15))
	}
	p("usage:    cluster-level decisions (backfill's manager, Koordinator's slo-controller) read online use %s old, CPU as a %s rate; node agents read the minute itself",
		minutes(cfg.lag), minutes(cfg.rateWindow))
	p("eviction: an evicted pod runs on and holds for its stop notice %s (backfill, CPU evictions) + grace period %s: %d min, or %d min without notice;",
		cfg.notice, cfg.grace, real.noticed, real.unnoticed)
	p("          the koordlet kills before it evicts (no budget, freed at once); the kernel's OOM killer likewise")
	p("jobs:     PodDisruptionBudgets: %.0f%% of jobs maxUnavailable 0 (the Eviction API refuses; the pod stays and is asked again), %.0f%% maxUnavailable 1;",
		100*cfg.load.pdbBlocking, 100*cfg.load.pdbOne)
	p("          %.0f%% of replicas grow above their memory request, %.0f-%.0f%% of it an hour up to %.1fx (BestEffort: no limit)",
		100*cfg.load.growing, 100*growthMin, 100*growthMax, growthCap)
	p("backfill: reclaim.Decide every minute, margin memory %d%%, eviction margins %d%% / %d%%, window %s, growth %d%%/min, min change %d%%, cool-down %s; the sweep sets the cpu margin and cpu eviction delay",
		set.Margin.Memory, set.EvictionMargin.CPU, set.EvictionMargin.Memory, minutes(set.Window), set.GrowthPerMinute, set.MinChange, minutes(set.Cooldown))
	g := a.settings()
	p("agent:    its own ceiling code (nodeagent.Governor), %d one-second ticks a minute at the minute's use, its state carried on:", ticksPerMinute)
	p("          ceiling %d%% of the node - online - system (floor %d%%) once online + system use %d%%, released after %d ticks below %d%%;",
		a.cpuThreshold, a.cpuFloor, a.cpuActivation, g.CPUReleaseTicks, a.cpuActivation-g.CPUActivationBand)
	p("          memory eviction above %d%% (down to %d%%), through the Eviction API", a.memoryThreshold, a.memoryThreshold-2)
	p("          without the agent offline pods are BestEffort: the kernel's CPU weights alone")
	p("Koordinator: batch = capacity x threshold - max(system, reserved) - 5-min average online use; suppress and memory eviction %d points above the thresholds, as its defaults",
		koordAbove)
	if cfg.signal.objective > 0 {
		p("signal:   backfill's manager hears online pods' P99 (the model's inflation, a %s rate as old as the usage) against an objective of %.2fx their P99 alone:",
			minutes(time.Duration(cfg.signal.window)*time.Minute), cfg.signal.objective)
		p("          harmful, a node stops growing; after %s it gives back %d%% of its CPU a step by evicting; it grows again %s after healthy; CPU wait not modelled",
			minutes(set.OnlineEvictAfter), set.OnlineStep, minutes(set.OnlineRecoverAfter))
	} else {
		p("signal:   none (-online-objective 0): no workload declares a latency objective")
	}
	for _, l := range cfg.harm.describe() {
		p("%s", l)
	}
	p("counted:  node-minutes with the node's CPU above 80/85/90%%; online P99 inflation (node-minutes above %gx and %gx, mean and p99 weighted by online CPU; above %gx in runs.tsv);",
		slowLines[1], slowLines[2], slowLines[0])
	p("          work lost to evictions and OOM kills since the last checkpoint (replica-hours); evictions: pods a policy evicted or killed (a gang's other replicas follow, uncounted);")
	p("          goodput: kept work / replica-time run or waiting to run again after a disruption")
	p("")
}

// printTable prints the frontier: a row per profile and variant, the mean
// over the seeds with the range of CPU and work lost, and with perSeed a
// row per seed under it.
func printTable(out io.Writer, f frontier, perSeed bool) {
	w, flush := newTable(out)
	head := []string{"policy", "knobs", "profile", "seeds"}
	for _, m := range tableMetrics {
		head = append(head, m.head)
	}
	fmt.Fprintln(w, strings.Join(append(head, "CPU min-max", "lost min-max"), "\t")+"\t")
	for i, pt := range f {
		if i > 0 && pt.profile != f[i-1].profile {
			fmt.Fprintln(w, "\t")
		}
		row := []string{pt.variant.family, pt.variant.knobs, pt.profile, "mean"}
		row = append(row, cells(pt.mean)...)
		row = append(row, fmt.Sprintf("%.1f-%.1f", pt.lo.cpuMean, pt.hi.cpuMean), fmt.Sprintf("%.1f-%.1f", pt.lo.lost, pt.hi.lost))
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
		if perSeed {
			for s, run := range pt.runs {
				row := append([]string{"", "", "", fmt.Sprint(pt.seeds[s])}, cells(run)...)
				fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
			}
		}
	}
	flush()
}

func cells(s summary) []string {
	var out []string
	for _, m := range tableMetrics {
		out = append(out, fmt.Sprintf(m.format, *m.of(&s)))
	}
	return out
}

// printVerdicts prints the target on each profile.
func printVerdicts(out io.Writer, vs []verdict) {
	fmt.Fprintf(out, "\ntarget: backfill + agent at >= %d%% CPU on every seed, against every Koordinator variant at >= %d%% on the same seed:\n", targetCPU, targetCPU)
	fmt.Fprintln(out, "        no more node-minutes above 85/90%, no more online P99 inflation (node-minutes above 1.5x and 3x, mean, p99), less work lost")
	for _, v := range vs {
		switch {
		case v.best == nil:
			fmt.Fprintf(out, "- %s: no backfill + agent or Koordinator variant swept\n", v.profile)
			continue
		case v.below:
			fmt.Fprintf(out, "- %s: NOT met: no backfill + agent variant reaches %d%% CPU on every seed (busiest: %s, %.1f%%)\n", v.profile, targetCPU, v.best.variant.knobs, v.best.mean.cpuMean)
		case v.met():
			fmt.Fprintf(out, "- %s: met by backfill + agent %s (%.1f%% CPU)\n", v.profile, v.best.variant.knobs, v.best.mean.cpuMean)
		default:
			holds := strings.Join(v.holds, ", ")
			if holds == "" {
				holds = "none of the criteria"
			}
			fmt.Fprintf(out, "- %s: NOT met; closest: backfill + agent %s (%.1f%% CPU), at or beyond on %s; short on:\n",
				v.profile, v.best.variant.knobs, v.best.mean.cpuMean, holds)
		}
		for _, m := range v.misses {
			fmt.Fprintf(out, "    %s\n", m)
		}
	}
}

// writeTables writes the frontier as Markdown (frontier.md, means) and
// tab-separated values (runs.tsv, every seed and every metric) into dir.
func writeTables(dir string, f frontier) error {
	var md bytes.Buffer
	head := []string{"policy", "knobs", "profile"}
	for _, m := range tableMetrics {
		head = append(head, m.head)
	}
	head = append(head, "CPU min-max", "lost min-max")
	fmt.Fprintf(&md, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, pt := range f {
		row := append([]string{pt.variant.family, pt.variant.knobs, pt.profile}, cells(pt.mean)...)
		row = append(row, fmt.Sprintf("%.1f-%.1f", pt.lo.cpuMean, pt.hi.cpuMean), fmt.Sprintf("%.1f-%.1f", pt.lo.lost, pt.hi.lost))
		fmt.Fprintf(&md, "| %s |\n", strings.Join(row, " | "))
	}
	var tsv bytes.Buffer
	cols := []string{"policy", "knobs", "profile", "seed"}
	for _, m := range allMetrics {
		cols = append(cols, m.head)
	}
	fmt.Fprintln(&tsv, strings.Join(cols, "\t"))
	for _, pt := range f {
		for s := range pt.runs {
			row := []string{pt.variant.family, pt.variant.knobs, pt.profile, fmt.Sprint(pt.seeds[s])}
			for _, m := range allMetrics {
				row = append(row, fmt.Sprintf(m.format, *m.of(&pt.runs[s])))
			}
			fmt.Fprintln(&tsv, strings.Join(row, "\t"))
		}
	}
	for name, b := range map[string][]byte{"frontier.md": md.Bytes(), "runs.tsv": tsv.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
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
