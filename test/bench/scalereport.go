package main

import (
	"fmt"
	"io"
	"strings"
)

// statusWrites are the successful writes of TFJob status in a window.
func statusWrites(w window) float64 {
	return w.others().sum(func(k requestKey) bool {
		return k.resource == "tfjobs/status" && (k.verb == "PUT" || k.verb == "PATCH" || k.verb == "APPLY") && succeeded(k.code)
	})
}

// jobWrites are the manager's writes for the jobs: of pods, services,
// TFJobs and events. Kwok's node and lease writes are left out (it does
// not touch unbound pods), and so are the reclaimed-capacity controller's
// node writes, which the reclaim section counts.
func jobWrites(w window) float64 {
	return w.others().sum(func(k requestKey) bool {
		if !isWrite(k.verb) {
			return false
		}
		switch strings.SplitN(k.resource, "/", 2)[0] {
		case "pods", "services", "tfjobs", "events", "podgroups":
			return true
		}
		return false
	})
}

// noopStatusWrites are status writes a watch saw change nothing.
func (r timedRun) noopStatusWrites() float64 {
	return statusWrites(r.run) - float64(r.status.changes)
}

// err reports what the scale run found wrong: objects missing, status
// writes that changed nothing, writes by a manager catching up with a
// settled cluster, or a problem of reclaimed capacity.
func (r *scaleResult) err() error {
	var problems []string
	for _, s := range r.sizes {
		for name, run := range map[string]timedRun{"catch-up": s.catchUp, "steady": s.steady} {
			want := s.jobs * replicasPerJob
			if run.objects.pods < want || run.objects.services < want {
				problems = append(problems, fmt.Sprintf("%d TFJobs, %s: %d pods and %d services, want %d each", s.jobs, name, run.objects.pods, run.objects.services, want))
			}
			if n := run.noopStatusWrites(); n != 0 {
				problems = append(problems, fmt.Sprintf("%d TFJobs, %s: %.0f status writes changed nothing", s.jobs, name, n))
			}
		}
	}
	for name, p := range map[string]memoryPoint{"running": r.running, "history": r.history} {
		if p.writes != 0 {
			problems = append(problems, fmt.Sprintf("memory (%s): a fresh manager wrote %.0f times for jobs that needed nothing", name, p.writes))
		}
	}
	if r.reclaim != nil {
		problems = append(problems, r.reclaim.problems...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("the scale run found:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// printScaleReport prints the scale run.
func printScaleReport(out io.Writer, m machine, r *scaleResult) {
	fmt.Fprintf(out, "\n== backfill scale benchmark: TFJobs of a chief, 4 workers and 2 PS; %d kwok nodes ==\n", r.nodes)
	printMachine(out, m)
	fmt.Fprintln(out, "managers:     outside system:masters (API Priority and Fairness paces them); reclaimed capacity on, usage from a fake Prometheus")
	fmt.Fprintln(out)
	w, flush := newTable(out, 0)
	cols := func(what string, f func(sizeResult) string) {
		fmt.Fprintf(w, "%s", what)
		for _, s := range r.sizes {
			fmt.Fprintf(w, "\t%s", f(s))
		}
		fmt.Fprintln(w)
	}
	cols("", func(s sizeResult) string { return fmt.Sprintf("%d TFJobs", s.jobs) })
	cols("catch-up: jobs exist, then a fresh manager starts", func(sizeResult) string { return "" })
	cols("  every pod and service exists, from its start", func(s sizeResult) string {
		return fmt.Sprintf("%s (%d objects)", secs(s.catchUp.allObjects), 2*s.jobs*replicasPerJob)
	})
	cols("  plain client-go creating the same objects", func(s sizeResult) string {
		return fmt.Sprintf("%s (%d at once)", secs(s.baseline.elapsed), s.baseline.concurrency)
	})
	cols("  ratio manager / plain client", func(s sizeResult) string {
		return fmt.Sprintf("%.2fx", s.catchUp.allObjects.Seconds()/s.baseline.elapsed.Seconds())
	})
	cols("  manager CPU / peak RSS", func(s sizeResult) string {
		return fmt.Sprintf("%.1f s / %.0f MiB", s.catchUp.run.cpu, float64(s.catchUp.peakRSS)/mib)
	})
	cols("  kube-apiserver / etcd CPU", func(s sizeResult) string {
		return fmt.Sprintf("%.1f s / %.1f s", s.catchUp.run.plane["kube-apiserver"], s.catchUp.run.plane["etcd"])
	})
	cols("  manager CPU per 1,000 objects / per reconcile", func(s sizeResult) string {
		return fmt.Sprintf("%.2f s / %.1f ms (%.0f reconciles)", s.catchUp.cpuPerThousand(), s.catchUp.cpuPerReconcile(), s.catchUp.run.reconciles)
	})
	cols("steady: jobs submitted one by one", func(s sizeResult) string { return fmt.Sprintf("%.0f a second", s.rate) })
	cols("  last submission / every object exists", func(s sizeResult) string {
		return fmt.Sprintf("%s / %s", secs(s.steady.submitted), secs(s.steady.allObjects))
	})
	cols("  per-job time to pods p50 / p99 / max", func(s sizeResult) string {
		t := s.steady.timeToPods
		return fmt.Sprintf("%s / %s / %s", secs(percentile(t, 50)), secs(percentile(t, 99)), secs(percentile(t, 100)))
	})
	cols("  manager CPU / peak RSS", func(s sizeResult) string {
		return fmt.Sprintf("%.1f s / %.0f MiB", s.steady.run.cpu, float64(s.steady.peakRSS)/mib)
	})
	cols("writes per job, catch-up / steady", func(s sizeResult) string {
		return fmt.Sprintf("%.1f / %.1f", jobWrites(s.catchUp.run)/float64(s.jobs), jobWrites(s.steady.run)/float64(s.jobs))
	})
	cols("status writes that changed nothing (must be 0)", func(s sizeResult) string {
		return fmt.Sprintf("%.0f / %.0f", s.catchUp.noopStatusWrites(), s.steady.noopStatusWrites())
	})
	flush()

	fmt.Fprintln(out)
	w, flush = newTable(out, 0)
	row := func(what, value string) { fmt.Fprintf(w, "%s\t%s\n", what, value) }
	if r.memoryLimit != "" {
		row(fmt.Sprintf("memory runs: the manager as in a container limited to %s (GOMEMLIMIT = 90%%, as it derives from its cgroup)", r.memoryLimit), "")
	}
	for _, p := range []memoryPoint{r.running, r.history} {
		if p.jobs == 0 {
			continue
		}
		row(fmt.Sprintf("memory: a fresh manager, %d running TFJobs on %d nodes + %d finished (%d pods in the cluster)", p.jobs-p.finished, r.nodes, p.finished, p.pods), "")
		row("  caught up and quiet (5 s) after", secs(p.settled))
		row("  peak RSS (VmHWM) / RSS when quiet (anonymous) / Go heap in use", fmt.Sprintf("%.0f MiB / %.0f MiB (%.0f MiB) / %.0f MiB", float64(p.usage.peakRSS)/mib, float64(p.usage.rss)/mib, float64(p.usage.anonRSS)/mib, p.heapInUse/mib))
		row("  live Go heap after a garbage collection (heap profile)", fmt.Sprintf("%.0f MiB", float64(p.liveHeap)/mib))
		row("  CPU until quiet / writes for the jobs (must be 0)", fmt.Sprintf("%.1f s / %.0f", p.usage.cpuSeconds, p.writes))
	}
	if added := r.history.finished - r.running.finished; added > 0 {
		grew, live := float64(r.history.usage.rss-r.running.usage.rss), float64(r.history.liveHeap-r.running.liveHeap)
		row(fmt.Sprintf("  %d finished single-worker jobs added (built in %s): RSS / live heap per job added", added, secs(r.historyBuild)), fmt.Sprintf("%.0f bytes / %.0f bytes", grew/float64(added), live/float64(added)))
	}
	flush()
	if r.reclaim != nil {
		printReclaimSection(out, r.reclaim)
	}
	for _, s := range r.sizes {
		printCPUProfile(out, "the manager", fmt.Sprintf("catch-up of %d TFJobs", s.jobs), s.catchUp.profile)
		printCPUProfile(out, "kube-apiserver", fmt.Sprintf("catch-up of %d TFJobs", s.jobs), s.catchUp.apiProfile)
	}
}
