package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespaces of the speed run.
const (
	benchNamespace    = "bench"
	warmupNamespace   = "bench-warmup"
	baselineNamespace = "bench-baseline"
)

// window is what changed between two moments of a run.
type window struct {
	apiserver  requestCounts // the apiserver's apiserver_request_total
	harness    requestCounts // of which the harness's own requests
	client     map[string]float64
	cpu        float64            // the manager's CPU seconds
	reconciles float64            // the manager's TFJob reconciles
	plane      map[string]float64 // CPU seconds of kube-apiserver and etcd
	harnessCPU float64            // the harness's own CPU seconds
	machineCPU float64            // CPU seconds the whole machine was busy
	elapsed    time.Duration
}

// others are the requests the harness did not send: the manager's, plus
// the apiserver's own background requests (e.g. its identity lease).
func (w window) others() requestCounts { return w.apiserver.minus(w.harness) }

// mark is the state of the counters at one moment.
type mark struct {
	apiserver, harness requestCounts
	client             map[string]float64
	reconciles         float64
	usage              usage
	plane              map[string]float64
	harnessCPU         float64
	machineCPU         float64
	at                 time.Time
}

func takeMark(ctx context.Context, c *cluster, m *manager) (mark, error) {
	var k mark
	var err error
	if k.apiserver, err = c.scrapeAPIServer(ctx); err != nil {
		return k, err
	}
	k.harness = c.count.snapshot()
	k.plane = controlPlaneCPU()
	k.harnessCPU, k.machineCPU, k.at = selfCPU(), machineCPU(), time.Now()
	if m == nil {
		return k, nil
	}
	mm, err := m.scrape(ctx)
	if err != nil {
		return k, err
	}
	k.client = mm.clientRequests()
	k.reconciles = mm.total("controller_runtime_reconcile_total", "controller=tfjob-controller")
	k.usage, err = m.usage()
	return k, err
}

func (k mark) until(later mark) window {
	w := window{
		apiserver:  later.apiserver.minus(k.apiserver),
		harness:    later.harness.minus(k.harness),
		client:     map[string]float64{},
		cpu:        later.usage.cpuSeconds - k.usage.cpuSeconds,
		reconciles: later.reconciles - k.reconciles,
		plane:      map[string]float64{},
		harnessCPU: later.harnessCPU - k.harnessCPU,
		machineCPU: later.machineCPU - k.machineCPU,
		elapsed:    later.at.Sub(k.at),
	}
	for method, v := range later.client {
		w.client[method] = v - k.client[method]
	}
	for name, v := range later.plane {
		w.plane[name] = v - k.plane[name]
	}
	return w
}

// speedResult is what the speed run measured.
type speedResult struct {
	jobs        int
	managerArgs []string
	createJobs  time.Duration // the harness's creates of the TFJobs
	allPods     time.Duration // from the first TFJob create until every pod existed
	allServices time.Duration
	settled     time.Duration // until the manager went quiet
	timeToPods  []time.Duration
	run         window
	usage       usage // the manager at the end of the run
	status      statusCount
	objects     objectCount    // as the apiserver lists them at the end
	events      map[string]int // the manager's events, by reason
	baseline    baselineResult
}

type statusCount struct {
	changes, reconcileTimeOnly, otherUpdates int
}

type objectCount struct{ pods, services, jobs int }

// runSpeed: the manager turns N TFJobs into pods and services; then a
// plain client creates the same objects.
func runSpeed(ctx context.Context, c *cluster, cfg config) (*speedResult, error) {
	for _, ns := range []string{benchNamespace, warmupNamespace} {
		if err := c.namespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	fmt.Println("starting backfill manager")
	m, err := startManager(ctx, c, cfg.backfill, "backfill-manager", extraManagerFlags(cfg.managerFlags))
	if err != nil {
		return nil, err
	}
	defer func() { _ = m.stop() }()
	if err := warmUp(ctx, c, m); err != nil {
		return nil, err
	}

	res, err := measureOperator(ctx, c, m, cfg)
	if err != nil {
		return nil, err
	}
	if err := m.stop(); err != nil {
		return nil, err
	}
	fmt.Printf("baseline: a plain client creates the same %d pods and %d services\n", res.objects.pods, res.objects.services)
	if res.baseline, err = runBaseline(ctx, c, cfg.baselineConcurrency); err != nil {
		return nil, err
	}
	return res, nil
}

// warmUp waits until the manager has started its controller and created
// one job's pods, so that the measured run does not include its start.
func warmUp(ctx context.Context, c *cluster, m *manager) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pods, err := c.watchArrivals(wctx, podsResource, warmupNamespace)
	if err != nil {
		return err
	}
	if _, err := createJobs(ctx, c.ctrl, warmupNamespace, []string{"warmup"}, 1); err != nil {
		return err
	}
	if _, err := pods.waitFor(ctx, replicasPerJob); err != nil {
		return fmt.Errorf("warm-up: %w; see %s", err, m.proc.LogPath())
	}
	_, err = m.settle(ctx, 2*time.Second)
	return err
}

// measureOperator creates the jobs at once and follows the manager until
// it has created everything and gone quiet.
func measureOperator(ctx context.Context, c *cluster, m *manager, cfg config) (*speedResult, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pods, err := c.watchArrivals(wctx, podsResource, benchNamespace)
	if err != nil {
		return nil, err
	}
	services, err := c.watchArrivals(wctx, servicesResource, benchNamespace)
	if err != nil {
		return nil, err
	}
	status, err := c.watchStatus(wctx, benchNamespace)
	if err != nil {
		return nil, err
	}
	before, err := takeMark(ctx, c, m)
	if err != nil {
		return nil, err
	}

	res := &speedResult{jobs: cfg.jobs, managerArgs: m.args}
	fmt.Printf("operator: creating %d TFJobs (%d pods, %d services expected)\n", cfg.jobs, cfg.jobs*replicasPerJob, cfg.jobs*replicasPerJob)
	start := time.Now()
	if res.createJobs, err = createJobs(ctx, c.ctrl, benchNamespace, jobNames("tfjob", cfg.jobs), cfg.concurrency); err != nil {
		return nil, err
	}
	lastPod, err := pods.waitFor(ctx, cfg.jobs*replicasPerJob)
	if err != nil {
		return nil, fmt.Errorf("pods: %w; see %s", err, m.proc.LogPath())
	}
	lastService, err := services.waitFor(ctx, cfg.jobs*replicasPerJob)
	if err != nil {
		return nil, fmt.Errorf("services: %w; see %s", err, m.proc.LogPath())
	}
	res.allPods, res.allServices = lastPod.Sub(start), lastService.Sub(start)
	fmt.Printf("operator: every pod after %s, every service after %s; waiting for the manager to go quiet\n",
		res.allPods.Round(time.Millisecond), res.allServices.Round(time.Millisecond))
	quietFrom, err := m.settle(ctx, 3*time.Second)
	if err != nil {
		return nil, err
	}
	res.settled = quietFrom.Sub(start)
	after, err := takeMark(ctx, c, m)
	if err != nil {
		return nil, err
	}
	res.run, res.usage = before.until(after), after.usage

	added, changes, lrtOnly, other, err := status.snapshot()
	if err != nil {
		return nil, err
	}
	res.status = statusCount{changes: changes, reconcileTimeOnly: lrtOnly, otherUpdates: other}
	if res.timeToPods, err = timeToPods(added, pods.completeAt(replicasPerJob)); err != nil {
		return nil, err
	}
	if res.objects, err = countObjects(ctx, c, benchNamespace); err != nil {
		return nil, err
	}
	res.events, err = eventReasons(ctx, c, benchNamespace)
	return res, err
}

// eventReasons counts the events of a namespace by reason.
func eventReasons(ctx context.Context, c *cluster, namespace string) (map[string]int, error) {
	var events eventsv1.EventList
	if err := c.ctrl.List(ctx, &events, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	out := map[string]int{}
	for _, e := range events.Items {
		out[e.Reason]++
	}
	return out, nil
}

// timeToPods is, per job, the time from its creation to its last pod.
func timeToPods(added, complete map[string]time.Time) ([]time.Duration, error) {
	out := make([]time.Duration, 0, len(added))
	for job, at := range added {
		done, ok := complete[job]
		if !ok {
			return nil, fmt.Errorf("TFJob %s never had all %d pods", job, replicasPerJob)
		}
		out = append(out, done.Sub(at))
	}
	slices.Sort(out)
	return out, nil
}

// countObjects lists what the apiserver holds in a namespace.
func countObjects(ctx context.Context, c *cluster, namespace string) (objectCount, error) {
	var n objectCount
	pods, err := c.meta.Resource(podsResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return n, err
	}
	services, err := c.meta.Resource(servicesResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return n, err
	}
	jobs, err := c.meta.Resource(tfjobsResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return n, err
	}
	return objectCount{pods: len(pods.Items), services: len(services.Items), jobs: len(jobs.Items)}, nil
}
