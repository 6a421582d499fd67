package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
)

// builderFlags let the manager that builds the memory run's cluster state
// write as fast as the apiserver takes it, and retire the jobs it finishes
// at once, as if they had finished long ago; the manager measured
// afterwards runs with the defaults (and -manager-flags).
var builderFlags = []string{"--kube-api-qps=2000", "--kube-api-burst=4000", "--workers=16", "--stop-notice=0", "--retire-after=0"}

// memoryResult is what the memory run measured.
type memoryResult struct {
	finished, running int
	objects           objectCount
	phases            []phase
	builder           usage
	builderArgs       []string
	measured          usage
	measuredArgs      []string
	settled           time.Duration // from its start until it was quiet
	startup           window        // requests while it started and caught up
	reconciles        float64
	heapInUse         float64
}

type phase struct {
	name string
	took time.Duration
}

// runMemory builds a cluster holding finished and running TFJobs with one
// manager, then starts a fresh manager on it and measures its memory once
// it has caught up: what the manager costs for the jobs it owns.
func runMemory(ctx context.Context, c *cluster, cfg config) (*memoryResult, error) {
	res := &memoryResult{finished: cfg.finished, running: cfg.running}
	if err := c.namespace(ctx, benchNamespace); err != nil {
		return nil, err
	}
	fmt.Printf("memory run: building %d finished and %d running TFJobs (manager with %s)\n", cfg.finished, cfg.running, strings.Join(builderFlags, " "))
	builder, err := startManager(ctx, c, cfg.backfill, "backfill-builder", builderFlags)
	if err != nil {
		return nil, err
	}
	defer func() { _ = builder.stop() }()
	res.builderArgs = builder.args
	if err := buildJobs(ctx, c, builder, cfg, res); err != nil {
		return nil, fmt.Errorf("%w; see %s", err, builder.proc.LogPath())
	}
	if res.builder, err = builder.usage(); err != nil {
		return nil, err
	}
	if err := builder.stop(); err != nil {
		return nil, err
	}
	if res.objects, err = countObjects(ctx, c, benchNamespace); err != nil {
		return nil, err
	}

	fmt.Println("memory run: starting a fresh manager on that cluster")
	before, err := takeMark(ctx, c, nil)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	m, err := startManager(ctx, c, cfg.backfill, "backfill-manager", extraManagerFlags(cfg.managerFlags))
	if err != nil {
		return nil, err
	}
	defer func() { _ = m.stop() }()
	res.measuredArgs = m.args
	// The finished jobs are retired: the manager's cache holds the others.
	if err := m.catchUp(ctx, float64(cfg.running)); err != nil {
		return nil, fmt.Errorf("%w; see %s", err, m.proc.LogPath())
	}
	quiet, err := m.settle(ctx, 5*time.Second)
	if err != nil {
		return nil, err
	}
	res.settled = quiet.Sub(start)
	after, err := takeMark(ctx, c, m)
	if err != nil {
		return nil, err
	}
	res.startup, res.measured = before.until(after), after.usage
	mm, err := m.scrape(ctx)
	if err != nil {
		return nil, err
	}
	res.reconciles = mm.total("controller_runtime_reconcile_total", "controller=tfjob-controller")
	res.heapInUse = mm.total("go_memstats_heap_inuse_bytes")
	return res, m.stop()
}

// catchUp waits until the manager has reconciled at least n times.
func (m *manager) catchUp(ctx context.Context, n float64) error {
	return wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		mm, err := m.scrape(ctx, "controller_runtime_reconcile_total")
		if err != nil {
			return false, err
		}
		return mm.total("controller_runtime_reconcile_total", "controller=tfjob-controller") >= n, nil
	})
}

// buildJobs creates the finished jobs, ends their pods (chiefs last, so
// that each job succeeds with nothing left running), waits for the
// operator to record it, then creates the running jobs and starts their
// pods.
func buildJobs(ctx context.Context, c *cluster, builder *manager, cfg config, res *memoryResult) error {
	step := func(name string, f func() error) error {
		start := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		res.phases = append(res.phases, phase{name, time.Since(start)})
		fmt.Printf("  %-60s %s\n", name, secs(time.Since(start)))
		return nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pods, err := c.watchArrivals(wctx, podsResource, benchNamespace)
	if err != nil {
		return err
	}
	done, running := jobNames("done", cfg.finished), jobNames("run", cfg.running)
	steps := []struct {
		name string
		f    func() error
	}{
		{fmt.Sprintf("create %d TFJobs; the operator creates their pods", len(done)), func() error {
			if _, err := createJobs(ctx, c.ctrl, benchNamespace, done, cfg.concurrency); err != nil {
				return err
			}
			_, err := pods.waitFor(ctx, len(done)*replicasPerJob)
			return err
		}},
		{"mark workers and parameter servers Succeeded", func() error {
			return setPhase(ctx, c, benchNamespace, replicaPods(done, "worker", 4, "ps", 2), corev1.PodSucceeded, cfg.concurrency)
		}},
		{"mark chiefs Succeeded", func() error {
			return setPhase(ctx, c, benchNamespace, replicaPods(done, "chief", 1), corev1.PodSucceeded, cfg.concurrency)
		}},
		{"the operator finishes the jobs (Succeeded, services gone, pods released)", func() error {
			return waitFinished(ctx, c, benchNamespace, "done-", len(done))
		}},
		{fmt.Sprintf("create %d TFJobs; the operator creates their pods", len(running)), func() error {
			if _, err := createJobs(ctx, c.ctrl, benchNamespace, running, cfg.concurrency); err != nil {
				return err
			}
			_, err := pods.waitFor(ctx, (len(done)+len(running))*replicasPerJob)
			return err
		}},
		{"mark their pods Running; the operator marks the jobs Running", func() error {
			if err := setPhase(ctx, c, benchNamespace, replicaPods(running, "chief", 1, "worker", 4, "ps", 2), corev1.PodRunning, cfg.concurrency); err != nil {
				return err
			}
			return waitJobs(ctx, c, benchNamespace, "run-", len(running), kubeflowv1.JobRunning)
		}},
		{"the operator goes quiet", func() error {
			_, err := builder.settle(ctx, 3*time.Second)
			return err
		}},
	}
	for _, s := range steps {
		if err := step(s.name, s.f); err != nil {
			return err
		}
	}
	return nil
}

// replicaPods names the pods of the jobs' replicas, given as pairs of a
// lowercase replica type and a count.
func replicaPods(jobs []string, typesAndCounts ...any) []string {
	var out []string
	for _, job := range jobs {
		for i := 0; i+1 < len(typesAndCounts); i += 2 {
			rtype, n := typesAndCounts[i].(string), typesAndCounts[i+1].(int)
			for index := range n {
				out = append(out, fmt.Sprintf("%s-%s-%d", job, rtype, index))
			}
		}
	}
	return out
}

func setPhase(ctx context.Context, c *cluster, namespace string, pods []string, phase corev1.PodPhase, concurrency int) error {
	return forEach(ctx, pods, concurrency, func(ctx context.Context, name string) error {
		return patchPodStatus(ctx, c.ctrl, namespace, name, phase)
	})
}

// waitFinished waits until the n jobs named prefix* in namespace
// succeeded and are retired, their services are gone and none of their
// pods holds a finalizer.
func waitFinished(ctx context.Context, c *cluster, namespace, prefix string, n int) error {
	if err := waitJobs(ctx, c, namespace, prefix, n, kubeflowv1.JobSucceeded); err != nil {
		return err
	}
	return poll(ctx, "jobs retired, services deleted and pods released", func(ctx context.Context) (bool, string, error) {
		jobs, err := c.meta.Resource(tfjobsResource).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: tfjob.RetiredLabel})
		if err != nil {
			return false, "", err
		}
		retired := 0
		for _, j := range jobs.Items {
			if strings.HasPrefix(j.Name, prefix) {
				retired++
			}
		}
		services, err := c.meta.Resource(servicesResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		pods, err := c.meta.Resource(podsResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		left, held := 0, 0
		for _, s := range services.Items {
			if strings.HasPrefix(s.Name, prefix) {
				left++
			}
		}
		for _, p := range pods.Items {
			if strings.HasPrefix(p.Name, prefix) && len(p.Finalizers) > 0 {
				held++
			}
		}
		return retired >= n && left == 0 && held == 0, fmt.Sprintf("%d of %d jobs retired, %d services left, %d pods hold a finalizer", retired, n, left, held), nil
	})
}

// waitJobs waits until n jobs named prefix* in namespace have ctype as
// their last condition.
func waitJobs(ctx context.Context, c *cluster, namespace, prefix string, n int, ctype kubeflowv1.JobConditionType) error {
	return poll(ctx, "TFJobs "+string(ctype), func(ctx context.Context) (bool, string, error) {
		var jobs kubeflowv1.TFJobList
		if err := c.ctrl.List(ctx, &jobs, client.InNamespace(namespace)); err != nil {
			return false, "", err
		}
		count := 0
		for _, j := range jobs.Items {
			conds := j.Status.Conditions
			if strings.HasPrefix(j.Name, prefix) && len(conds) > 0 && conds[len(conds)-1].Type == ctype && conds[len(conds)-1].Status == corev1.ConditionTrue {
				count++
			}
		}
		return count >= n, fmt.Sprintf("%d of %d", count, n), nil
	})
}

// poll checks cond every 2 s and prints its progress every 30 s.
func poll(ctx context.Context, what string, cond func(context.Context) (bool, string, error)) error {
	lastPrint := time.Now()
	var progress string
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, p, err := cond(ctx)
		progress = p
		if !ok && time.Since(lastPrint) > 30*time.Second {
			fmt.Printf("    waiting for %s: %s\n", what, p)
			lastPrint = time.Now()
		}
		return ok, err
	})
	if err != nil {
		return fmt.Errorf("waiting for %s (%s): %w", what, progress, err)
	}
	return nil
}

// printMemoryReport prints the memory run.
func printMemoryReport(out io.Writer, _ config, m machine, r *memoryResult) {
	fmt.Fprintf(out, "\n== backfill memory benchmark: %d finished + %d running TFJobs ==\n", r.finished, r.running)
	printMachine(out, m)
	fmt.Fprintln(out)
	w, flush := newTable(out, 0)
	row := func(what, value string) { fmt.Fprintf(w, "%s\t%s\n", what, value) }
	row("cluster", fmt.Sprintf("%d TFJobs, %d pods, %d services", r.objects.jobs, r.objects.pods, r.objects.services))
	row("building it (manager "+strings.Join(builderFlags, " ")+")", "")
	total := time.Duration(0)
	for _, p := range r.phases {
		row("  "+p.name, secs(p.took))
		total += p.took
	}
	row("  total", secs(total))
	row("  that manager's peak RSS (VmHWM) / CPU", fmt.Sprintf("%.0f MiB / %.1f s", float64(r.builder.peakRSS)/mib, r.builder.cpuSeconds))
	row("a fresh manager on that cluster", "backfill "+managerCommand(r.measuredArgs))
	row("  caught up and quiet (5 s) after", fmt.Sprintf("%s  (%.0f reconciles)", secs(r.settled), r.reconciles))
	row("  peak RSS (VmHWM)", fmt.Sprintf("%.0f MiB", float64(r.measured.peakRSS)/mib))
	row("  RSS / Go heap in use when quiet", fmt.Sprintf("%.0f MiB / %.0f MiB", float64(r.measured.rss)/mib, r.heapInUse/mib))
	if r.objects.pods > 0 {
		row("  Go heap in use per cached pod + service (garbage included)", fmt.Sprintf("%.1f KiB", r.heapInUse/1024/float64(r.objects.pods+r.objects.services)))
	}
	row("  CPU until quiet", fmt.Sprintf("%.1f s", r.measured.cpuSeconds))
	failed := r.startup.others().sum(func(k requestKey) bool { return isWrite(k.verb) && k.resource != "leases" && !succeeded(k.code) })
	row("  writes while catching up: succeeded / failed", fmt.Sprintf("%.0f / %.0f  (a settled cluster needs none)", r.startup.managerWrites()-failed, failed))
	flush()
	fmt.Fprintf(out, "\nAPI requests while the fresh manager started and caught up\n")
	printRequests(out, r.startup)
}
