package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

// printReclaimReport prints the reclaim-scale run.
func printReclaimReport(out io.Writer, m machine, r *reclaimResult) {
	fmt.Fprintf(out, "\n== backfill benchmark: reclaimed capacity on %d nodes ==\n", r.nodes)
	printMachine(out, m)
	printReclaimSection(out, r)
}

// printReclaimSection prints what the reclaim measurement saw: one column
// per phase, then the whole run, the apiserver's requests of the last
// phase and the invariants.
func printReclaimSection(out io.Writer, r *reclaimResult) {
	s := r.settings
	fmt.Fprintf(out, "manager:      backfill %s\n", managerCommand(r.managerArgs))
	fmt.Fprintf(out, "reclaim:      interval %s, growth %d %%/min, min change %d %%, margin cpu %d %% / memory %d %%, window %s\n",
		s.Interval, s.GrowthPerMinute, s.MinChange, s.Margin.CPU, s.Margin.Memory, s.Window)
	fmt.Fprintf(out, "nodes:        %d kwok nodes, %s CPU / %s, allocatable %s CPU / %s; %d online pods (1-3 per node, requests 60-75 %% of allocatable, seed %d)\n",
		r.nodes, nodeCPU.String(), nodeMemory.String(), nodeAllocatableCPU.String(), nodeAllocatableMemory.String(), r.onlinePods, r.seed)
	fmt.Fprintf(out, "usage:        fake Prometheus: online use %.0f-%.0f %% of requests, drifting ±%.0f points over %s, noise ±%.0f point every %s; set up in %s\n",
		100*(0.30-driftAmplitude), 100*(0.40+driftAmplitude), 100*driftAmplitude, driftPeriod, 100*noiseAmplitude, noiseStep, r.setup.Round(time.Second))
	if r.leaseSeconds != 0 && r.leaseSeconds != 40 {
		fmt.Fprintf(out, "leases:       the nodes' Leases last %d s, renewed every %d s (a kubelet's: 40 s, every 10 s)\n", r.leaseSeconds, r.leaseSeconds/4)
	}
	if r.runningJobs > 0 {
		fmt.Fprintf(out, "jobs:         %d running single-worker TFJobs on reclaimed capacity (2 CPUs, 4 GiB), bound one a node, run by kwok; set up in %s\n",
			r.runningJobs, r.runningSetup.Round(time.Second))
	}
	fmt.Fprintln(out, "phases:       start-up = from the manager's start until its first sync ended; ramp = until the first sync after which")
	fmt.Fprintln(out, "              every node's published cpu and memory were within the min change of its target; steady = the rest")

	fmt.Fprintln(out)
	w, flush := newTable(out, 0)
	cols := append(slices.Clone(r.phases), r.whole)
	row := func(what string, value func(p reclaimPhase) string) {
		cells := []string{what}
		for _, p := range cols {
			cells = append(cells, value(p))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	row("", func(p reclaimPhase) string { return p.name })
	row("length", func(p reclaimPhase) string { return secs(p.run.elapsed) })
	row("reclaim syncs", func(p reclaimPhase) string { return fmt.Sprintf("%.0f", p.syncs) })
	row("sync time mean / p50 / p99 / max", func(p reclaimPhase) string { return syncTimes(p.records) })
	row("node writes (reclaim_node_writes_total)", func(p reclaimPhase) string { return fmt.Sprintf("%.0f", p.writes) })
	row("  per minute", func(p reclaimPhase) string { return perMinute(p.writes, p.run.elapsed) })
	row("  per node per sync", func(p reclaimPhase) string { return ratio(p.writes, p.syncs*float64(r.nodes), "%.3f") })
	row("apiserver nodes/status PATCH (not harness)", func(p reclaimPhase) string { return nodePatches(p.run, "nodes/status") })
	row("apiserver nodes PATCH (not harness)", func(p reclaimPhase) string { return nodePatches(p.run, "nodes") })
	row("manager PATCH (its rest_client count)", func(p reclaimPhase) string { return fmt.Sprintf("%.0f", p.run.client["PATCH"]) })
	row("Prometheus queries / per sync", func(p reclaimPhase) string {
		return fmt.Sprintf("%d / %s", p.queries, ratio(float64(p.queries), p.syncs, "%.1f"))
	})
	row("manager CPU (share of one core)", func(p reclaimPhase) string {
		return fmt.Sprintf("%.1f s (%s)", p.run.cpu, ratio(100*p.run.cpu, p.run.elapsed.Seconds(), "%.1f %%"))
	})
	row("kube-apiserver / etcd CPU", func(p reclaimPhase) string {
		return fmt.Sprintf("%.1f s / %.1f s", p.run.plane["kube-apiserver"], p.run.plane["etcd"])
	})
	row("machine busy", func(p reclaimPhase) string {
		return fmt.Sprintf("%.0f of %.0f s", p.run.machineCPU, float64(runtime.NumCPU())*p.run.elapsed.Seconds())
	})
	flush()

	fmt.Fprintln(out)
	w, flush = newTable(out, 0)
	f := r.final
	fmt.Fprintf(w, "sync time from the histogram, p50 / p99 (rough: linear within buckets)\t%s / %s\n",
		histSecs(histogramQuantile(0.5, f.syncs, f.buckets)), histSecs(histogramQuantile(0.99, f.syncs, f.buckets)))
	fmt.Fprintf(w, "  buckets (cumulative, %.0f syncs, sum %.2f s)\t%s\n", f.syncs, f.syncSeconds, bucketsLabel(f.buckets))
	fmt.Fprintf(w, "manager RSS at the end / peak (VmHWM)\t%.0f MiB / %.0f MiB\n", float64(r.usage.rss)/mib, float64(r.usage.peakRSS)/mib)
	fmt.Fprintf(w, "nodes off their target at the end\t%d of %d\n", f.offTarget, r.nodes)
	fmt.Fprintf(w, "usage source up at the end\t%.0f\n", f.sourceUp)
	fmt.Fprintf(w, "fake Prometheus: queries / unknown / other requests\t%d / %d / %d\n", r.queries.total, len(r.queries.unknown), r.queries.others)
	flush()
	fmt.Fprintln(out, "(sync times per phase are exact: the histogram's sum, scraped after every sync; a p99 of few syncs is their max)")

	last := r.phases[len(r.phases)-1]
	fmt.Fprintf(out, "\nAPI requests in the %s phase (apiserver_request_total)\n", last.name)
	printRequests(out, last.run)
	fmt.Fprintln(out, "(kwok's requests are among the others: node Leases, heartbeats in nodes/status, pods/status)")
	printAgentsSection(out, r)

	fmt.Fprintln(out)
	if len(r.problems) == 0 {
		fmt.Fprintln(out, "invariants:   ok (syncs after the first; queries per sync constant; steady writes at most one per node per sync; source up)")
		return
	}
	for _, p := range r.problems {
		fmt.Fprintf(out, "BROKEN:       %s\n", p)
	}
}

// syncTimes are the mean, p50, p99 and max of the records that hold one
// sync each.
func syncTimes(records []syncRecord) string {
	var took []time.Duration
	total := 0.0
	for _, r := range records {
		if r.syncs == 1 {
			took = append(took, time.Duration(r.seconds*float64(time.Second)))
			total += r.seconds
		}
	}
	if len(took) == 0 {
		return "-"
	}
	slices.Sort(took)
	mean := time.Duration(total / float64(len(took)) * float64(time.Second))
	return fmt.Sprintf("%s / %s / %s / %s", short(mean), short(percentile(took, 50)), short(percentile(took, 99)), short(percentile(took, 100)))
}

func short(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func nodePatches(w window, resource string) string {
	return fmt.Sprintf("%.0f", w.others().sum(func(k requestKey) bool { return k.verb == "PATCH" && k.resource == resource }))
}

func perMinute(n float64, d time.Duration) string {
	return ratio(n, d.Minutes(), "%.1f")
}

// ratio formats a/b, or "-" when b is 0.
func ratio(a, b float64, format string) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf(format, a/b)
}

func histSecs(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f s", v)
}
