package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// The scale run answers, on one apiserver: how fast does one manager
// create what hundreds to thousands of TFJobs need, against a plain
// client creating the same objects, and how much memory does it hold for
// thousands of running jobs on a thousand nodes, with reclaimed capacity
// on, and for a long history of finished jobs?
//
// For each size it times a catch-up (the jobs exist before the manager
// starts, as after an outage or an upgrade), the plain client creating
// copies of the same pods and services, and a steady submission (jobs
// arriving at -steady-rate while the manager runs). The steady jobs, and
// the catch-up jobs of every size but the last, are then finished, as a
// kubelet would end their pods; the last catch-up jobs are bound to the
// nodes and run. A fresh manager then measures memory and reclaimed
// capacity; -history single-worker jobs are finished on top, and another
// fresh manager measures memory again.

// scaleResult is what the scale run measured.
type scaleResult struct {
	nodes int
	// memoryLimit is the container limit the memory runs stand in.
	memoryLimit string
	sizes       []sizeResult
	running     memoryPoint
	reclaim     *reclaimResult
	history     memoryPoint
	// historyBuild is how long finishing the history took.
	historyBuild time.Duration
}

// sizeResult is one size's speed.
type sizeResult struct {
	jobs     int
	catchUp  timedRun
	baseline baselineResult
	steady   timedRun
	rate     float64 // steady jobs submitted per second
}

// timedRun is one manager run that creates the pods and services of a
// set of jobs.
type timedRun struct {
	// allObjects is from the manager's start (catch-up) or the first
	// submission (steady) until every pod and service existed.
	allObjects time.Duration
	// firstObject is from the same start until the first pod or service
	// existed: in a catch-up, the manager's start-up (the APF probe,
	// discovery, syncing its caches) before its first create.
	firstObject time.Duration
	submitted   time.Duration // steady: the last submission
	timeToPods  []time.Duration
	run         window
	peakRSS     int64
	status      statusCount
	objects     objectCount
	profile     *cpuProfile // of the manager's CPU, if asked for
	apiProfile  *cpuProfile // of kube-apiserver's CPU over the same span
}

// cpuPerThousand is the manager's CPU seconds per 1,000 pods and
// services it created.
func (r timedRun) cpuPerThousand() float64 {
	return r.run.cpu / float64(r.objects.pods+r.objects.services) * 1000
}

// cpuPerReconcile is the manager's CPU milliseconds per TFJob reconcile.
func (r timedRun) cpuPerReconcile() float64 {
	if r.run.reconciles == 0 {
		return 0
	}
	return r.run.cpu / r.run.reconciles * 1000
}

// memoryPoint is a fresh manager's memory once it caught up.
type memoryPoint struct {
	jobs, finished int
	pods           int // pods in the cluster
	settled        time.Duration
	usage          usage
	heapInUse      float64
	liveHeap       int64   // after a garbage collection
	writes         float64 // writes while catching up
}

// replicasOf are the replica types and counts of tfJob, as replicaPods
// takes them.
var (
	notChiefs = []any{"worker", 4, "ps", 2}
	chiefs    = []any{"chief", 1}
	allOfJob  = []any{"chief", 1, "worker", 4, "ps", 2}
)

// runScale runs the scale benchmark.
func runScale(ctx context.Context, c *cluster, cfg config) (*scaleResult, error) {
	res := &scaleResult{nodes: cfg.nodes, memoryLimit: cfg.managerMemoryLimit}
	sizes, err := parseSizes(cfg.sizes)
	if err != nil {
		return nil, err
	}
	// kwok stands in for kubelets, which the apiserver's node-high level
	// serves; it stays an admin, so that it never competes with the
	// managers in their priority level.
	env, err := startReclaimEnv(ctx, c, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _ = env.stop() }()
	if err := c.paceManagers(ctx); err != nil {
		return nil, err
	}
	flags := slices.Concat(env.managerFlags(), extraManagerFlags(cfg.managerFlags))

	finished := 0 // jobs the speed runs leave finished
	for i, n := range sizes {
		last := i == len(sizes)-1
		r, err := runSize(ctx, c, cfg, flags, n, !last)
		if err != nil {
			return nil, err
		}
		res.sizes = append(res.sizes, r)
		finished += n
		if !last {
			finished += n
		}
	}

	n := sizes[len(sizes)-1]
	fmt.Printf("memory: binding the pods of the %d catch-up jobs to %d nodes\n", n, len(env.nodes))
	ns := catchUpNamespace(n)
	if err := bindPods(ctx, c, ns, replicaPods(jobNames("job", n), allOfJob...), env.nodes, cfg.concurrency); err != nil {
		return nil, err
	}
	if err := runUntil(ctx, c, cfg, flags, "manager-running", func() error {
		return waitJobs(ctx, c, ns, "job-", n, kubeflowv1.JobRunning)
	}); err != nil {
		return nil, err
	}
	if res.running, err = measureMemory(ctx, c, cfg, flags, n, finished); err != nil {
		return nil, err
	}
	if res.reclaim, err = env.measure(ctx, c, cfg, flags); err != nil {
		return nil, err
	}
	if res.historyBuild, err = buildHistory(ctx, c, cfg, flags); err != nil {
		return nil, err
	}
	res.history, err = measureMemory(ctx, c, cfg, flags, n, finished+cfg.history)
	return res, err
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-sizes=%q: want job counts separated by commas, e.g. 200,2000", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func catchUpNamespace(n int) string { return fmt.Sprintf("catchup-%d", n) }
func steadyNamespace(n int) string  { return fmt.Sprintf("steady-%d", n) }

// runSize times one size: catch-up, baseline, steady; then finishes the
// steady jobs and, if finishCatchUp, the catch-up jobs.
func runSize(ctx context.Context, c *cluster, cfg config, flags []string, n int, finishCatchUp bool) (sizeResult, error) {
	res := sizeResult{jobs: n}
	catchUp, steady := catchUpNamespace(n), steadyNamespace(n)
	for _, ns := range []string{catchUp, steady} {
		if err := c.namespace(ctx, ns); err != nil {
			return res, err
		}
	}
	fmt.Printf("size %d: creating %d TFJobs with no manager running\n", n, n)
	names := jobNames("job", n)
	if _, err := createJobs(ctx, c.ctrl, catchUp, names, cfg.concurrency); err != nil {
		return res, err
	}
	var err error
	if res.catchUp, err = timeManager(ctx, c, cfg, flags, catchUp, n, nil, fmt.Sprintf("catch-up-%d", n)); err != nil {
		return res, err
	}
	fmt.Printf("size %d: catch-up %s; baseline: a plain client creates the same %d objects\n", n, secs(res.catchUp.allObjects), 2*n*replicasPerJob)
	if res.baseline, err = runBaselineOf(ctx, c, catchUp, fmt.Sprintf("baseline-%d", n), cfg.baselineConcurrency); err != nil {
		return res, err
	}
	res.rate = cfg.steadyRate
	submit := func(ctx context.Context) (time.Duration, error) {
		return submitSteadily(ctx, c, steady, names, cfg.steadyRate)
	}
	fmt.Printf("size %d: baseline %s; submitting %d TFJobs at %.0f a second\n", n, secs(res.baseline.elapsed), n, cfg.steadyRate)
	if res.steady, err = timeManager(ctx, c, cfg, flags, steady, n, submit, ""); err != nil {
		return res, err
	}
	fmt.Printf("size %d: steady %s; finishing its jobs\n", n, secs(res.steady.allObjects))
	finish := []string{steady}
	if finishCatchUp {
		finish = append(finish, catchUp)
	}
	return res, finishJobs(ctx, c, cfg, flags, finish, names)
}

// timeManager starts a fresh manager and times it until every pod and
// service of n jobs in namespace exists and it has gone quiet. submit, if
// set, submits the jobs once the manager runs (steady); otherwise the
// jobs exist already (catch-up) and the clock starts with the manager.
// A profile name asks for a CPU profile of the manager from its start
// until it is quiet, in cfg.profileDir.
func timeManager(ctx context.Context, c *cluster, cfg config, flags []string, namespace string, n int, submit func(context.Context) (time.Duration, error), profile string) (timedRun, error) {
	var res timedRun
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pods, err := c.watchArrivals(wctx, podsResource, namespace)
	if err != nil {
		return res, err
	}
	services, err := c.watchArrivals(wctx, servicesResource, namespace)
	if err != nil {
		return res, err
	}
	status, err := c.watchStatus(wctx, namespace)
	if err != nil {
		return res, err
	}
	before, err := takeMark(ctx, c, nil)
	if err != nil {
		return res, err
	}
	var pprofAddr string
	if profile != "" {
		port, err := framework.FreePort()
		if err != nil {
			return res, err
		}
		pprofAddr = "127.0.0.1:" + strconv.Itoa(port)
		flags = slices.Concat(flags, []string{"--pprof-bind-address=" + pprofAddr})
	}
	start := time.Now()
	m, err := startManager(ctx, c, cfg.backfill, "manager-"+namespace, flags)
	if err != nil {
		return res, err
	}
	defer func() { _ = m.stop() }()
	var profiler, apiProfiler *cpuProfiler
	if profile != "" {
		profiler = startCPUProfile(ctx, managerCPUProfile(pprofAddr), cfg.profileDir, profile)
		apiProfiler = startCPUProfile(ctx, c.apiserverCPUProfile, cfg.profileDir, profile+".kube-apiserver")
	}
	if submit != nil {
		start = time.Now()
		if res.submitted, err = submit(ctx); err != nil {
			return res, err
		}
	}
	lastPod, err := pods.waitFor(ctx, n*replicasPerJob)
	if err != nil {
		return res, fmt.Errorf("pods: %w; see %s", err, m.proc.LogPath())
	}
	lastService, err := services.waitFor(ctx, n*replicasPerJob)
	if err != nil {
		return res, fmt.Errorf("services: %w; see %s", err, m.proc.LogPath())
	}
	res.allObjects = max(lastPod.Sub(start), lastService.Sub(start))
	res.firstObject = firstOf(pods.earliest(), services.earliest()).Sub(start)
	if _, err := m.settle(ctx, 3*time.Second); err != nil {
		return res, err
	}
	after, err := takeMark(ctx, c, m)
	if err != nil {
		return res, err
	}
	res.run, res.peakRSS = before.until(after), after.usage.peakRSS
	if profiler != nil {
		if res.profile, err = profiler.finish(); err != nil {
			return res, err
		}
		// Its allocations since its start, beside the CPU profile.
		res.profile.heap = filepath.Join(cfg.profileDir, profile+".heap.pb.gz")
		if _, err := saveHeapProfile(ctx, pprofAddr, res.profile.heap); err != nil {
			return res, err
		}
		if res.apiProfile, err = apiProfiler.finish(); err != nil {
			return res, err
		}
	}
	added, changes, lrtOnly, other, err := status.snapshot()
	if err != nil {
		return res, err
	}
	res.status = statusCount{changes: changes, reconcileTimeOnly: lrtOnly, otherUpdates: other}
	if submit != nil {
		if res.timeToPods, err = timeToPods(added, pods.completeAt(replicasPerJob)); err != nil {
			return res, err
		}
	}
	if res.objects, err = countObjects(ctx, c, namespace); err != nil {
		return res, err
	}
	return res, m.stop()
}

// firstOf is the earlier of two times, either of which may be zero.
func firstOf(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// submitSteadily creates the jobs one by one at rate a second, each on
// its own schedule whatever the previous create took; it returns when
// the last create was sent, measured from the first.
func submitSteadily(ctx context.Context, c *cluster, namespace string, names []string, rate float64) (time.Duration, error) {
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	for i, name := range names {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Until(start.Add(time.Duration(i) * interval))):
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.ctrl.Create(ctx, tfJob(namespace, name)); err != nil {
				errs <- fmt.Errorf("creating TFJob %s: %w", name, err)
			}
		}()
	}
	sent := time.Since(start)
	wg.Wait()
	close(errs)
	return sent, <-errs
}

// finishJobs ends the pods of the jobs named in each namespace as a
// kubelet would (workers and parameter servers first, chiefs last) and
// waits until a manager has finished every job.
func finishJobs(ctx context.Context, c *cluster, cfg config, flags []string, namespaces []string, names []string) error {
	m, err := startManager(ctx, c, cfg.backfill, "manager-finish", slices.Concat(flags, builderFlags))
	if err != nil {
		return err
	}
	defer func() { _ = m.stop() }()
	for _, ns := range namespaces {
		if err := setPhase(ctx, c, ns, replicaPods(names, notChiefs...), corev1.PodSucceeded, cfg.concurrency); err != nil {
			return err
		}
		if err := setPhase(ctx, c, ns, replicaPods(names, chiefs...), corev1.PodSucceeded, cfg.concurrency); err != nil {
			return err
		}
	}
	for _, ns := range namespaces {
		if err := waitFinished(ctx, c, ns, "job-", len(names)); err != nil {
			return fmt.Errorf("%w; see %s", err, m.proc.LogPath())
		}
	}
	return m.stop()
}

// buildHistory adds -history finished single-worker jobs, the commonest
// kind, each keeping its succeeded pod (cleanPodPolicy Running).
func buildHistory(ctx context.Context, c *cluster, cfg config, flags []string) (time.Duration, error) {
	const ns = "history"
	if err := c.namespace(ctx, ns); err != nil {
		return 0, err
	}
	start := time.Now()
	fmt.Printf("history: %d single-worker TFJobs, finished\n", cfg.history)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pods, err := c.watchArrivals(wctx, podsResource, ns)
	if err != nil {
		return 0, err
	}
	m, err := startManager(ctx, c, cfg.backfill, "manager-history", slices.Concat(flags, builderFlags))
	if err != nil {
		return 0, err
	}
	defer func() { _ = m.stop() }()
	names := jobNames("done", cfg.history)
	if _, err := createJobsOf(ctx, c.ctrl, singleWorkerJob, ns, names, cfg.concurrency); err != nil {
		return 0, err
	}
	if _, err := pods.waitFor(ctx, len(names)); err != nil {
		return 0, fmt.Errorf("history pods: %w; see %s", err, m.proc.LogPath())
	}
	if err := setPhase(ctx, c, ns, replicaPods(names, "worker", 1), corev1.PodSucceeded, cfg.concurrency); err != nil {
		return 0, err
	}
	if err := waitFinished(ctx, c, ns, "done-", len(names)); err != nil {
		return 0, fmt.Errorf("%w; see %s", err, m.proc.LogPath())
	}
	return time.Since(start), m.stop()
}

// runUntil runs a manager with fast client settings until done holds and
// it has gone quiet.
func runUntil(ctx context.Context, c *cluster, cfg config, flags []string, name string, done func() error) error {
	m, err := startManager(ctx, c, cfg.backfill, name, slices.Concat(flags, builderFlags))
	if err != nil {
		return err
	}
	defer func() { _ = m.stop() }()
	if err := done(); err != nil {
		return fmt.Errorf("%w; see %s", err, m.proc.LogPath())
	}
	if _, err := m.settle(ctx, 3*time.Second); err != nil {
		return err
	}
	return m.stop()
}

// measureMemory starts a fresh manager on a settled cluster, waits until
// it has reconciled every job, and measures it once quiet.
func measureMemory(ctx context.Context, c *cluster, cfg config, flags []string, running, finished int) (memoryPoint, error) {
	res := memoryPoint{jobs: running + finished, finished: finished}
	before, err := takeMark(ctx, c, nil)
	if err != nil {
		return res, err
	}
	fmt.Printf("memory: a fresh manager with %d running and %d finished TFJobs besides\n", running, finished)
	start := time.Now()
	port, err := framework.FreePort()
	if err != nil {
		return res, err
	}
	pprof := "127.0.0.1:" + strconv.Itoa(port)
	name := fmt.Sprintf("manager-memory-%d", finished)
	env, err := memoryLimitEnv(cfg.managerMemoryLimit)
	if err != nil {
		return res, err
	}
	m, err := startManagerWithEnv(ctx, c, cfg.backfill, name, slices.Concat(flags, []string{"--pprof-bind-address=" + pprof}), env)
	if err != nil {
		return res, err
	}
	defer func() { _ = m.stop() }()
	// The finished jobs are retired: the manager's cache holds the others.
	if err := m.catchUp(ctx, float64(running)); err != nil {
		return res, fmt.Errorf("%w; see %s", err, m.proc.LogPath())
	}
	quiet, err := m.settle(ctx, 5*time.Second)
	if err != nil {
		return res, err
	}
	res.settled = quiet.Sub(start)
	after, err := takeMark(ctx, c, m)
	if err != nil {
		return res, err
	}
	res.usage = after.usage
	res.writes = jobWrites(before.until(after))
	mm, err := m.scrape(ctx)
	if err != nil {
		return res, err
	}
	res.heapInUse = mm.total("go_memstats_heap_inuse_bytes")
	if res.liveHeap, err = saveHeapProfile(ctx, pprof, filepath.Join(c.dir, name+".heap")); err != nil {
		return res, err
	}
	all, err := c.meta.Resource(podsResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return res, err
	}
	res.pods = len(all.Items)
	return res, m.stop()
}

// saveHeapProfile saves the heap profile of the manager's pprof endpoint
// at addr, taken right after a garbage collection, to path (read it with
// `go tool pprof -sample_index=inuse_space`), and returns the live heap
// it reports.
func saveHeapProfile(ctx context.Context, addr, path string) (int64, error) {
	get := func(query string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/heap?"+query, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("reading the manager's heap profile: %w", err)
		}
		defer func() { _ = resp.Body.Close() }()
		return io.ReadAll(resp.Body)
	}
	profile, err := get("gc=1")
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(path, profile, 0o600); err != nil {
		return 0, err
	}
	text, err := get("debug=1")
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`# HeapAlloc = (\d+)`).FindSubmatch(text)
	if m == nil {
		return 0, fmt.Errorf("the manager's heap profile has no HeapAlloc")
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

// memoryLimitEnv is the environment of a manager in a container whose
// memory limit is limit: the soft limit the manager derives from its
// cgroup (90%), which the harness, with no cgroup of its own, passes as
// GOMEMLIMIT. Empty limit: none.
func memoryLimitEnv(limit string) ([]string, error) {
	if limit == "" {
		return nil, nil
	}
	q, err := resource.ParseQuantity(limit)
	if err != nil || q.Value() <= 0 {
		return nil, fmt.Errorf("-manager-memory-limit=%q: want a size such as 250Mi", limit)
	}
	return []string{"GOMEMLIMIT=" + strconv.FormatInt(q.Value()*9/10, 10)}, nil
}
