package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// The catch-up run is the scale run's catch-up alone, at one size and
// with nothing else on the apiserver: -jobs TFJobs exist before a fresh
// manager starts, and the run measures what the manager spends, in CPU
// per object created and per reconcile, with a CPU profile of it from its
// start until it is quiet. It is short enough to repeat, build against
// build, when a change is meant to make the manager cheaper.

// catchUpResult is what the catch-up run measured.
type catchUpResult struct {
	jobs     int
	args     []string
	run      timedRun
	events   map[string]int // the manager's events, by reason
	baseline baselineResult
}

// runCatchUp runs the catch-up benchmark.
func runCatchUp(ctx context.Context, c *cluster, cfg config) (*catchUpResult, error) {
	const ns = "catchup"
	if err := c.namespace(ctx, ns); err != nil {
		return nil, err
	}
	fmt.Printf("catch-up: creating %d TFJobs with no manager running\n", cfg.jobs)
	if _, err := createJobs(ctx, c.ctrl, ns, jobNames("job", cfg.jobs), cfg.concurrency); err != nil {
		return nil, err
	}
	res := &catchUpResult{jobs: cfg.jobs, args: extraManagerFlags(cfg.managerFlags)}
	var err error
	if res.run, err = timeManager(ctx, c, cfg, res.args, ns, cfg.jobs, nil, fmt.Sprintf("catch-up-%d", cfg.jobs)); err != nil {
		return nil, err
	}
	if res.events, err = eventReasons(ctx, c, ns); err != nil {
		return nil, err
	}
	fmt.Printf("catch-up: every object after %s; baseline: a plain client creates the same %d objects\n", secs(res.run.allObjects), res.run.objects.pods+res.run.objects.services)
	if res.baseline, err = runBaselineOf(ctx, c, ns, "catchup-baseline", cfg.baselineConcurrency); err != nil {
		return nil, err
	}
	return res, nil
}

// err reports objects missing or status writes that changed nothing.
func (r *catchUpResult) err() error {
	want := r.jobs * replicasPerJob
	if r.run.objects.pods < want || r.run.objects.services < want {
		return fmt.Errorf("the catch-up run found %d pods and %d services, want %d each", r.run.objects.pods, r.run.objects.services, want)
	}
	if n := r.run.noopStatusWrites(); n != 0 {
		return fmt.Errorf("the catch-up run found %.0f status writes that changed nothing", n)
	}
	return nil
}

// printCatchUpReport prints the catch-up run.
func printCatchUpReport(out io.Writer, m machine, r *catchUpResult) {
	fmt.Fprintf(out, "\n== backfill catch-up benchmark: %d TFJobs (chief + 4 workers + 2 PS) exist, then a fresh manager starts ==\n", r.jobs)
	printMachine(out, m)
	fmt.Fprintf(out, "manager:      backfill manager %s\n", managerCommand(slices.Concat(r.args, []string{"--pprof-bind-address=127.0.0.1:PORT"})))
	fmt.Fprintln(out)
	run := r.run
	objects := run.objects.pods + run.objects.services
	w, flush := newTable(out, 0)
	row := func(what, value string) { fmt.Fprintf(w, "%s\t%s\n", what, value) }
	row(fmt.Sprintf("every pod and service exists (%d), from the manager's start", objects), secs(run.allObjects))
	row("the first pod or service, from the manager's start (its start-up)", secs(run.firstObject))
	row(fmt.Sprintf("plain client-go creating the same objects (%d at once)", r.baseline.concurrency), secs(r.baseline.elapsed))
	row("ratio manager / plain client", fmt.Sprintf("%.2fx", run.allObjects.Seconds()/r.baseline.elapsed.Seconds()))
	row("manager CPU from its start until quiet (utime + stime)", fmt.Sprintf("%.2f s  (peak RSS %.0f MiB)", run.run.cpu, float64(run.peakRSS)/mib))
	row("manager CPU per 1,000 pods and services", fmt.Sprintf("%.3f s", run.cpuPerThousand()))
	row("manager CPU per TFJob reconcile", fmt.Sprintf("%.2f ms  (%.0f reconciles, %.1f per job)", run.cpuPerReconcile(), run.run.reconciles, run.run.reconciles/float64(r.jobs)))
	row("kube-apiserver / etcd CPU", fmt.Sprintf("%.1f s / %.1f s", run.run.plane["kube-apiserver"], run.run.plane["etcd"]))
	row("manager CPU / kube-apiserver CPU", fmt.Sprintf("%.2f", run.run.cpu/run.run.plane["kube-apiserver"]))
	row("kube-apiserver / etcd CPU, plain client", fmt.Sprintf("%.1f s / %.1f s", r.baseline.run.plane["kube-apiserver"], r.baseline.run.plane["etcd"]))
	row("manager requests by method (its own count)", methods(run.run.client))
	row("manager writes per job", fmt.Sprintf("%.1f", jobWrites(run.run)/float64(r.jobs)))
	row("events in the namespace, by reason", reasons(r.events))
	row("elapsed until quiet (3 s without a request)", secs(run.run.elapsed.Round(time.Millisecond)))
	flush()
	printCPUProfile(out, "the manager", "from its start until quiet", run.profile)
	printCPUProfile(out, "kube-apiserver", "over the same span", run.apiProfile)
}
