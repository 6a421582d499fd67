package gpuloan

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/tide"
)

// ControllerName names the controller in logs and events.
const ControllerName = "gpu-loan-controller"

// eventRecorder is the events API the controller emits to.
type eventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Controller decides, every Settings.Interval, the GPU loans of every pool
// with a forecast, and carries them out. It runs on the leader only.
type Controller struct {
	// client writes, and reads the TFJobs from the manager's cache;
	// reader reads what the cache does not hold (workloads, unscheduled
	// pods) from the apiserver.
	client   client.Client
	reader   client.Reader
	dynamic  dynamic.Interface
	view     *clusterview.View
	settings Settings
	// offlineClass is the manager's --offline-priority-class, which tells
	// online pods from offline.
	offlineClass string
	history      *histories
	recorder     eventRecorder
	clock        clock.PassiveClock
	log          logr.Logger

	// missed are the online pods already counted as a missed return.
	missed map[types.UID]bool
	// lastSync is when the last decision ran, for the waiting time.
	lastSync time.Time
	// known are the pools of the last decision, to forget gone ones;
	// warned the problems of forecasts already logged.
	known  map[string]bool
	warned map[string]string
	// kedaServed is whether the last read found ScaledObjects served.
	kedaServed bool
	// gate holds new jobs until a loan is long enough for them.
	gate *Gate
	// intervals are the lent jobs' checkpoint intervals, warmUps the
	// online workloads' measured warm-ups.
	intervals *intervals
	warmUps   *warmUps
}

// NewController decides with settings, reading the cluster from view, c
// and reader, KEDA's ScaledObjects through dc, and history from the
// Prometheus at prometheusURL ("" for none).
func NewController(c client.Client, reader client.Reader, dc dynamic.Interface, view *clusterview.View, settings Settings, offlineClass, prometheusURL string,
	recorder eventRecorder, clk clock.PassiveClock, log logr.Logger) (*Controller, error) {
	ctrl := &Controller{client: c, reader: reader, dynamic: dc, view: view, settings: settings, offlineClass: offlineClass,
		recorder: recorder, clock: clk, log: log.WithName(ControllerName), missed: map[types.UID]bool{}, known: map[string]bool{}, warned: map[string]string{},
		gate: NewGate(settings), intervals: newIntervals(), warmUps: newWarmUps()}
	if prometheusURL != "" {
		source, err := newPromSamples(prometheusURL)
		if err != nil {
			return nil, err
		}
		ctrl.history = &histories{source: source, s: settings}
	}
	return ctrl, nil
}

// Gate is what the TFJob controller asks before a job's first pods.
func (c *Controller) Gate() *Gate { return c.gate }

// Start decides every interval until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.log.Info("Lending online work's idle GPUs to training", "interval", c.settings.Interval, "lead", c.settings.Tide.Lead,
		"defaultCheckpointTime", c.settings.Tide.DefaultCheckpointTime, "defaultWarmUp", c.settings.DefaultWarmUp, "history", c.history != nil)
	c.view.EverySynced(ctx, c.settings.Interval, c.Sync, c.log, "Deciding GPU loans")
	return nil
}

// Sync makes one decision for every GPU pool.
func (c *Controller) Sync(ctx context.Context) error {
	now := c.clock.Now()
	var jobs kubeflowv1.TFJobList
	if err := c.client.List(ctx, &jobs); err != nil {
		return fmt.Errorf("listing TFJobs for their GPU loans: %w", err)
	}
	pods := c.view.Pods()
	cl := clusterOf(c.view.Nodes(), pods, jobs.Items)
	c.forgetGonePools(cl)
	c.intervals.observe(cl)
	c.warmUps.observe(pods)
	if len(cl.pools) == 0 {
		c.lastSync = now
		c.gate.decided(map[string]gatePool{}, nil, now)
		return nil
	}
	forecasts, err := c.forecasts(ctx, now)
	if err != nil {
		return err
	}
	waiting, err := waitingOnline(ctx, c.reader, c.offlineClass)
	if err != nil {
		return err
	}
	waitingByPool := c.waits(waiting, cl, now)
	c.countHeld(cl, now)
	c.lastSync = now
	var errs []error
	decided := map[string]gatePool{}
	for _, name := range sortedPools(cl.pools) {
		gp, err := c.syncPool(ctx, cl, name, forecasts, waitingByPool[name], now)
		decided[name] = gp
		errs = append(errs, err)
	}
	c.gate.decided(decided, cl.boundJobs(), now)
	return errors.Join(errs...)
}

// countHeld adds the GPU-seconds each pool's loans held since the last
// decision, at most two intervals: a leader that was not deciding counts
// nothing for the gap.
func (c *Controller) countHeld(cl *cluster, now time.Time) {
	if c.lastSync.IsZero() {
		return
	}
	d := min(now.Sub(c.lastSync), 2*c.settings.Interval)
	for _, name := range sortedPools(cl.pools) {
		metrics.GPULoanHeld(name, cl.lent(name), d)
	}
}

// forgetGonePools drops the series of pools whose nodes are gone.
func (c *Controller) forgetGonePools(cl *cluster) {
	for name := range c.known {
		if cl.pools[name] == nil {
			metrics.GPULoanPoolGone(name)
			delete(c.known, name)
		}
	}
	for name := range cl.pools {
		c.known[name] = true
	}
}

// forecasts reads every online GPU workload's forecast.
func (c *Controller) forecasts(ctx context.Context, now time.Time) ([]forecast, error) {
	workloads, err := onlineWorkloads(ctx, c.reader, c.offlineClass)
	if err != nil {
		return nil, err
	}
	scaled, served, err := readScaledObjects(ctx, c.dynamic)
	if err != nil {
		// Forecasts fall back to the other sources meanwhile.
		c.warnOnce("keda", err, "Cannot read KEDA's ScaledObjects: workloads they scale are forecast from their annotation, history or current replicas")
	}
	if served != c.kedaServed {
		c.kedaServed = served
		c.log.Info("KEDA's ScaledObjects", "served", served)
	}
	histories, err := c.history.of(ctx, now)
	if err != nil {
		c.warnOnce("history", err, "Cannot read the workloads' replicas history from Prometheus: the last one read stands")
	} else {
		c.warnOnce("history", nil, "")
	}
	c.warmUps.keep(workloads)
	out := make([]forecast, 0, len(workloads))
	for _, w := range workloads {
		var so *scaledObject
		if s, ok := scaled[w.key()]; ok {
			so = &s
		}
		f := forecastOf(w, so, histories[w.key()], c.warmUps.of(w, c.settings.DefaultWarmUp))
		c.warnOnce("forecast/"+w.key(), f.problem, "A GPU workload's stated schedule cannot be read; its forecast comes from the next source", "workload", w.key(), "source", f.source)
		out = append(out, f)
	}
	return out, nil
}

// warnOnce logs a problem once until it changes or goes away.
func (c *Controller) warnOnce(key string, err error, msg string, kv ...any) {
	if err == nil {
		delete(c.warned, key)
		return
	}
	if c.warned[key] == err.Error() {
		return
	}
	c.warned[key] = err.Error()
	c.log.Error(err, msg, kv...)
}

// syncPool decides and carries out one pool's loans: notices due now,
// pauses due now, then resumes while loans are long enough. It returns the
// pool as the gate of new jobs sees it.
func (c *Controller) syncPool(ctx context.Context, cl *cluster, name string, forecasts []forecast, waiting int, now time.Time) (gatePool, error) {
	p := cl.pools[name]
	var workloads []tide.Workload
	managed := false
	for _, f := range forecasts {
		if !f.w.placement.fits(name) {
			continue
		}
		managed = managed || f.source != sourceNone
		workloads = append(workloads, tide.Workload{Name: f.w.String(), Replicas: f.replicas, GPUsPerPod: f.w.gpusPerPod, WarmUp: f.warmUp})
	}
	paused := c.pausedIn(cl, name)
	// A pool that lost its forecast still ends the returns under way and
	// resumes the jobs it paused.
	if !managed && len(paused) == 0 && !returningIn(cl, name) {
		metrics.GPULoanPool(name, cl.lent(name), time.Time{}, time.Time{})
		return gatePool{}, nil
	}
	demand, err := tide.PoolDemand(workloads, now, now.Add(c.settings.Horizon))
	if err != nil {
		return gatePool{}, fmt.Errorf("pool %s: %w", name, err)
	}
	loans := cl.poolLoans(name)
	tp := tide.Pool{GPUs: p.gpus - cl.taken[name], Demand: demand, OnlineInUse: max(cl.online[name]+waiting, 0)}
	for _, l := range loans {
		ln := l.loan()
		ln.CheckpointInterval = c.intervals.of(l.key, l.state)
		tp.Loans = append(tp.Loans, ln)
	}
	tp.Loans = append(tp.Loans, c.startingLoans(cl, name)...)
	returns := tide.Returns(now, tp, c.settings.Tide)
	var next time.Time
	if len(returns) > 0 {
		next = returns[0].Deadline
	}
	var lendableUntil time.Time
	if offer := tide.Lendable(now, tp, c.settings.Tide); offer.GPUs > 0 {
		lendableUntil = offer.Until
	}
	metrics.GPULoanPool(name, cl.lent(name), next, lendableUntil)

	var errs []error
	errs = append(errs, c.noticeDue(ctx, cl, name, returns, waiting > 0, now))
	errs = append(errs, c.pauseDue(ctx, cl, name, tp, now))
	tp, err = c.resumeAdmitted(ctx, paused, tp, now)
	errs = append(errs, err)
	return gatePool{managed: managed, pool: tp}, errors.Join(errs...)
}

// noticeDue gives notice to the loans whose notice time comes before the
// next decision. While online pods wait in the pool, the returns under way
// are marked late.
func (c *Controller) noticeDue(ctx context.Context, cl *cluster, name string, returns []tide.Return, onlineWaits bool, now time.Time) error {
	var errs []error
	for _, r := range returns {
		l := cl.loans[name][r.Job]
		if l == nil || l.job == nil {
			continue
		}
		if l.state.Phase == PhaseReturning {
			if onlineWaits && !l.state.Late {
				l.state.Late = true
				errs = append(errs, c.writeState(ctx, l.job, l.state, nil))
			}
			continue
		}
		// The last decision before the notice time gives it: one after
		// would shorten the job's checkpoint time by up to an interval.
		if now.Add(c.settings.Interval).Before(r.Notice) {
			continue
		}
		errs = append(errs, c.notice(ctx, l, r, cl.jobPods[l.key], now))
	}
	return errors.Join(errs...)
}

// pauseDue pauses the returning jobs of the pool whose time came, whether
// or not their pods are still there.
func (c *Controller) pauseDue(ctx context.Context, cl *cluster, name string, tp tide.Pool, now time.Time) error {
	var errs []error
	for _, key := range sortedJobs(cl.jobs) {
		job := cl.jobs[key]
		s, ok, err := ReadLoanState(job.Annotations)
		// A loan noticed in this pass (an unplanned spike's deadline is
		// now): its state is the one just written, not the cache's.
		if l := cl.loans[name][key]; l != nil && l.state.Phase == PhaseReturning {
			s, ok, err = l.state, true, nil
		}
		if err != nil || !ok || s.Phase != PhaseReturning || s.Pool != name {
			continue
		}
		if finished(job) || leftToKueue(job) || !due(job, s, now) {
			continue
		}
		others := tp
		others.Loans = withoutJob(tp.Loans, key)
		next := tide.NextLoan(now, now, others, c.settings.Tide, s.GPUs)
		errs = append(errs, c.pause(ctx, job, s, cl.jobPods[key], next, now))
	}
	return errors.Join(errs...)
}

// pausedIn are the jobs the manager paused in the pool that are still
// suspended and not finished, oldest return first. A job a user resumed
// is theirs again.
func (c *Controller) pausedIn(cl *cluster, name string) []*kubeflowv1.TFJob {
	var out []*kubeflowv1.TFJob
	returned := map[string]time.Time{}
	for _, key := range sortedJobs(cl.jobs) {
		job := cl.jobs[key]
		s, ok, err := ReadLoanState(job.Annotations)
		if err != nil || !ok || s.Phase != PhasePaused || s.Pool != name || !suspended(job) || finished(job) {
			continue
		}
		out = append(out, job)
		returned[key] = s.ReturnedAt
	}
	sort.SliceStable(out, func(i, j int) bool {
		return returned[out[i].Namespace+"/"+out[i].Name].Before(returned[out[j].Namespace+"/"+out[j].Name])
	})
	return out
}

// returningIn reports whether a job of the pool was told to return.
func returningIn(cl *cluster, name string) bool {
	for _, job := range cl.jobs {
		if s, ok, err := ReadLoanState(job.Annotations); err == nil && ok && s.Phase == PhaseReturning && s.Pool == name && !finished(job) {
			return true
		}
	}
	return false
}

// startingLoans are the jobs resumed on a loan in the pool whose pods are
// not bound yet: their GPUs are spoken for.
func (c *Controller) startingLoans(cl *cluster, name string) []tide.Loan {
	var out []tide.Loan
	for _, key := range sortedJobs(cl.jobs) {
		job := cl.jobs[key]
		s, ok, err := ReadLoanState(job.Annotations)
		if err != nil || !ok || s.Phase != PhaseLent || s.Pool != name || suspended(job) || finished(job) {
			continue
		}
		if cl.loans[name][key] == nil && len(cl.jobPods[key]) == 0 {
			out = append(out, tide.Loan{Job: key, GPUs: s.GPUs, Started: s.ResumedAt, CheckpointTime: s.checkpointTime(), CheckpointInterval: s.checkpointInterval()})
		}
	}
	return out
}

// resumeAdmitted resumes paused jobs, oldest return first, while a loan
// is long enough for each; the others learn their next loan. It returns
// the pool with the resumed jobs' loans.
func (c *Controller) resumeAdmitted(ctx context.Context, paused []*kubeflowv1.TFJob, tp tide.Pool, now time.Time) (tide.Pool, error) {
	var errs []error
	for _, job := range paused {
		s, _, _ := ReadLoanState(job.Annotations)
		if !returnPassed(s, now) {
			continue
		}
		key := job.Namespace + "/" + job.Name
		a := tide.Admit(now, tp, c.settings.Tide, tide.Request{GPUs: s.GPUs, CheckpointTime: s.checkpointTime(), CheckpointInterval: s.checkpointInterval()})
		if a.OK {
			if err := c.resume(ctx, job, s, a, now); err != nil {
				errs = append(errs, err)
				continue
			}
			tp.Loans = append(tp.Loans, tide.Loan{Job: key, GPUs: s.GPUs, Started: now, CheckpointTime: s.checkpointTime(), CheckpointInterval: s.checkpointInterval()})
			continue
		}
		next := tide.NextLoan(now, now, tp, c.settings.Tide, s.GPUs)
		if !next.Truncate(time.Minute).Equal(s.NextLoan.Truncate(time.Minute)) {
			s.NextLoan = next
			errs = append(errs, c.writeState(ctx, job, s, nil))
		}
	}
	return tp, errors.Join(errs...)
}

// returnPassed reports whether the return a job paused for is past its
// deadline. A handshake pauses a job before it; the GPUs then sit free
// until online takes them, and a loan of that gap would notice and pause
// the job again within it.
func returnPassed(s LoanState, now time.Time) bool { return !now.Before(s.Deadline) }

// withoutJob is loans without the job's.
func withoutJob(loans []tide.Loan, key string) []tide.Loan {
	out := make([]tide.Loan, 0, len(loans))
	for _, l := range loans {
		if l.Job != key {
			out = append(out, l)
		}
	}
	return out
}

// sortedJobs are the jobs' keys in order.
func sortedJobs(jobs map[string]*kubeflowv1.TFJob) []string {
	keys := make([]string, 0, len(jobs))
	for k := range jobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
