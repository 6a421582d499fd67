package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

const mib = 1 << 20

func printMachine(w io.Writer, m machine) {
	fmt.Fprintf(w, "machine:      %d CPUs (%s), %.1f GiB memory\n", m.cpus, m.cpuModel, float64(m.memory)/(1<<30))
	fmt.Fprintf(w, "software:     harness %s, backfill built with %s, kube-apiserver %s (envtest, etcd from bin/)\n", m.goVersion, m.backfillGo, m.apiserverVersion)
	fmt.Fprintf(w, "load average: %s at start, %s at end (1, 5, 15 min)\n", m.loadStart, m.loadEnd)
}

// printSpeedReport prints the speed run as tables.
func printSpeedReport(out io.Writer, cfg config, m machine, r *speedResult) {
	fmt.Fprintf(out, "\n== backfill benchmark: %d TFJobs (chief + 4 workers + 2 PS) ==\n", r.jobs)
	printMachine(out, m)
	fmt.Fprintf(out, "manager:      backfill %s\n", managerCommand(r.managerArgs))

	objects := 2 * r.jobs * replicasPerJob
	allObjects := max(r.allPods, r.allServices)
	writes := r.run.managerWrites()
	statusWrites := r.run.others().sum(func(k requestKey) bool {
		return k.resource == "tfjobs/status" && (k.verb == "PUT" || k.verb == "PATCH" || k.verb == "APPLY") && succeeded(k.code)
	})
	statusConflicts := r.run.others().sum(func(k requestKey) bool {
		return k.resource == "tfjobs/status" && isWrite(k.verb) && !succeeded(k.code)
	})
	ratio := allObjects.Seconds() / r.baseline.elapsed.Seconds()

	fmt.Fprintln(out)
	w, flush := newTable(out, 0)
	row := func(what, value string) { fmt.Fprintf(w, "%s\t%s\n", what, value) }
	row("operator", "")
	row(fmt.Sprintf("  TFJobs created by the harness (%d at once)", cfg.concurrency), secs(r.createJobs))
	row(fmt.Sprintf("  every pod exists (%d)", r.objects.pods), secs(r.allPods))
	row(fmt.Sprintf("  every service exists (%d)", r.objects.services), secs(r.allServices))
	row(fmt.Sprintf("  every object exists (%d)", objects), fmt.Sprintf("%s  (%.0f objects/s)", secs(allObjects), float64(objects)/allObjects.Seconds()))
	row("  manager quiet (no request for 3 s) after", secs(r.settled))
	row("  per-job time to pods p50 / p99 / max", fmt.Sprintf("%s / %s / %s", secs(percentile(r.timeToPods, 50)), secs(percentile(r.timeToPods, 99)), secs(percentile(r.timeToPods, 100))))
	row("  manager CPU during the run", fmt.Sprintf("%.1f s  (%.1f s since start)", r.run.cpu, r.usage.cpuSeconds))
	row("  manager peak RSS (VmHWM)", fmt.Sprintf("%.0f MiB  (RSS %.0f MiB at the end)", float64(r.usage.peakRSS)/mib, float64(r.usage.rss)/mib))
	row("  kube-apiserver / etcd CPU during the run", fmt.Sprintf("%.1f s / %.1f s", r.run.plane["kube-apiserver"], r.run.plane["etcd"]))
	row("  machine busy / harness CPU during the run", fmt.Sprintf("%.1f s of %.1f s available / %.1f s", r.run.machineCPU, float64(m.cpus)*r.run.elapsed.Seconds(), r.run.harnessCPU))
	row("  manager writes (all responses)", fmt.Sprintf("%.0f  (%.1f per job)", writes, writes/float64(r.jobs)))
	row("  manager requests by method (its own count)", methods(r.run.client))
	row("  events in the namespace, by reason", reasons(r.events))
	row("  TFJob status writes: succeeded / failed", fmt.Sprintf("%.0f / %.0f", statusWrites, statusConflicts))
	row("  status changes seen by a watch on TFJobs", fmt.Sprintf("%d  (%d only in lastReconcileTime; %d other updates)", r.status.changes, r.status.reconcileTimeOnly, r.status.otherUpdates))
	row("  status writes that changed nothing (must be 0)", fmt.Sprintf("%.0f", statusWrites-float64(r.status.changes)))
	row("baseline: plain client-go, no operator", "")
	row(fmt.Sprintf("  %d pods + %d services, %d creates at once", r.baseline.pods, r.baseline.services, r.baseline.concurrency), fmt.Sprintf("%s  (%.0f objects/s)", secs(r.baseline.elapsed), float64(r.baseline.pods+r.baseline.services)/r.baseline.elapsed.Seconds()))
	row("  kube-apiserver / etcd CPU", fmt.Sprintf("%.1f s / %.1f s", r.baseline.run.plane["kube-apiserver"], r.baseline.run.plane["etcd"]))
	row("  machine busy / harness CPU", fmt.Sprintf("%.1f s of %.1f s available / %.1f s", r.baseline.run.machineCPU, float64(m.cpus)*r.baseline.run.elapsed.Seconds(), r.baseline.run.harnessCPU))
	row("ratio operator / baseline (every object exists)", fmt.Sprintf("%.1fx", ratio))
	flush()

	fmt.Fprintf(out, "\nAPI requests during the operator run (apiserver_request_total, from the first TFJob create until the manager was quiet)\n")
	printRequests(out, r.run)
}

// newTable aligns columns two spaces apart; flush prints the table
// without trailing blanks.
func newTable(out io.Writer, flags uint) (w *tabwriter.Writer, flush func()) {
	var buf bytes.Buffer
	w = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', flags)
	return w, func() {
		_ = w.Flush()
		for _, line := range strings.SplitAfter(buf.String(), "\n") {
			if line != "" {
				fmt.Fprintln(out, strings.TrimRight(line, " \n"))
			}
		}
	}
}

// managerWrites are the write requests the harness did not send, except
// the apiserver's own lease renewals (the manager runs without leader
// election).
func (w window) managerWrites() float64 {
	return w.others().sum(func(k requestKey) bool { return isWrite(k.verb) && k.resource != "leases" })
}

func printRequests(out io.Writer, run window) {
	w, flush := newTable(out, tabwriter.AlignRight)
	fmt.Fprintf(w, "resource\tverb\tall\tfailed\tharness\tothers\t\n")
	harness := run.harness.byVerbAndResource()
	find := func(verb, resource string) float64 {
		for _, h := range harness {
			if h.verb == verb && h.resource == resource {
				return h.ok + h.failed
			}
		}
		return 0
	}
	for _, r := range run.apiserver.byVerbAndResource() {
		if r.verb == "WATCH" {
			continue // counted when a watch ends, not when it starts
		}
		h := find(r.verb, r.resource)
		fmt.Fprintf(w, "%s\t%s\t%.0f\t%.0f\t%.0f\t%.0f\t\n", r.resource, r.verb, r.ok+r.failed, r.failed, h, r.ok+r.failed-h)
	}
	flush()
	fmt.Fprintln(out, "(others = the manager, plus the apiserver's own background requests such as its identity lease)")
}

func managerCommand(args []string) string {
	var shown []string
	for _, a := range args {
		if strings.HasPrefix(a, "--kubeconfig=") {
			a = "--kubeconfig=K"
		}
		if strings.HasPrefix(a, "--metrics-bind-address=") {
			a = "--metrics-bind-address=127.0.0.1:PORT"
		}
		shown = append(shown, a)
	}
	return strings.Join(shown, " ")
}

func methods(m map[string]float64) string {
	var parts []string
	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if v := m[method]; v != 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", method, v))
		}
	}
	return strings.Join(parts, ", ")
}

func reasons(m map[string]int) string {
	var parts []string
	for _, reason := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", reason, m[reason]))
	}
	return strings.Join(parts, ", ")
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

func secs(d time.Duration) string {
	return fmt.Sprintf("%.2f s", d.Seconds())
}
