// Package tfjob is the TFJob controller: for every replica of a job one pod
// and one headless service, TF_CONFIG, restarts, and the job's status, the
// way Kubeflow's training-operator v1 does it, with v1's bugs fixed.
package tfjob

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/progress"
)

// ControllerName names the controller in logs, events and metrics.
const ControllerName = "tfjob-controller"

// conflictRetry is how soon a pass that met a newer job retries; the watch
// usually brings the newer job sooner.
const conflictRetry = 200 * time.Millisecond

// Options are the manager-wide settings of the controller.
type Options struct {
	// DefaultCleanPodPolicy applies to jobs whose spec leaves it unset.
	DefaultCleanPodPolicy kubeflowv1.CleanPodPolicy
	// ClusterDomain is appended to service names in TF_CONFIG, if set.
	ClusterDomain string
	// Workers is the number of jobs reconciled at once.
	Workers int
	// OfflinePriorityClass is the PriorityClass of pods that name none.
	OfflinePriorityClass string
	// GracePeriod is the termination grace period of pods whose template
	// sets none: the time training has to save a checkpoint on SIGTERM.
	GracePeriod time.Duration
	// Gang is the cluster's gang scheduler: distributed jobs start as
	// gangs through its PodGroup.
	Gang colocation.GangScheduler
	// GangSchedulerName is the schedulerName of pods in a scheduler-plugins
	// gang (that scheduler's own name in the cluster).
	GangSchedulerName string
	// StopNotice is how long before stopping a running pod itself the
	// operator tells the pod (see StopReasonAnnotation).
	StopNotice time.Duration
	// RetireAfter is how long a finished job stays in the cache once it is
	// done (see RetiredLabel).
	RetireAfter time.Duration
	// Reclaim gives the pods of jobs that do not opt out batch resources
	// in place of cpu and memory: they run in reclaimed capacity.
	Reclaim bool
	// Supply, with Reclaim, is the reclaim controller: jobs whose pods
	// wait for reclaimed capacity say why (CapacityPending).
	Supply ReclaimedSupply
	// Loans, when set, holds new jobs that ask for lent GPUs until a loan
	// lasts long enough for them (CapacityPending).
	Loans LoanGate
	// Progress holds what training code reported (nil: no reports); the
	// controller writes it into the jobs' status.
	Progress *progress.Store
	// Reports, when set, is what the tensorflow containers need to report
	// their progress: the URL, its CA and the token's audience.
	Reports *ReportAccess
	// Retiring, when set, is told of the jobs the controller retires (see
	// RetiredLabel): the metrics' watch, which it is shared with, must not
	// count their leaving the cache as a deletion.
	Retiring *metrics.RetiringJobs
}

// eventRecorder is the events API the reconciler emits to.
type eventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Reconciler reconciles TFJobs.
type Reconciler struct {
	client   client.Client
	recorder eventRecorder
	clock    clock.PassiveClock
	opts     Options
	expected *expectations
	refused  *refusedJobs
}

// NewReconciler returns a reconciler that reads through c (the manager's
// cached client), emits to recorder and tells time by clk.
func NewReconciler(c client.Client, recorder eventRecorder, clk clock.PassiveClock, opts Options) *Reconciler {
	if opts.DefaultCleanPodPolicy == "" {
		opts.DefaultCleanPodPolicy = kubeflowv1.CleanPodPolicyRunning
	}
	return &Reconciler{client: c, recorder: recorder, clock: clk, opts: opts, expected: newExpectations(), refused: newRefusedJobs()}
}

// SetupWithManager registers the controller and the cache indexes it reads.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := indexByJobName(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		// Every change of the job wakes it, its own status writes included:
		// a pass that waited for the cache to show its last write is woken
		// by exactly that write.
		For(&kubeflowv1.TFJob{}).
		// A pod's or service's change wakes the job that controls it
		// (what Owns does, without a REST mapping per event).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(controllingJob)).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(controllingJob)).
		// A PriorityClass that appears releases the jobs waiting for it.
		Watches(&schedulingv1.PriorityClass{}, handler.EnqueueRequestsFromMapFunc(r.jobsWaitingToStart)).
		Watches(&corev1.ResourceQuota{}, handler.EnqueueRequestsFromMapFunc(r.refused.wake), builder.WithPredicates(quotaFreed)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.opts.Workers, 1)})
	if r.opts.Gang != colocation.GangNone {
		b = b.Owns(EmptyPodGroup(r.opts.Gang))
	}
	if r.opts.Supply != nil {
		// A change of what reclaimed capacity the cluster offers wakes the
		// jobs whose pods wait for it, to say why anew.
		b = b.WatchesRawSource(source.Channel(r.opts.Supply.SupplyChanges(), r.supplyChanged()))
	}
	if r.opts.Progress != nil {
		// A report wakes its job, which writes it into the status.
		b = b.WatchesRawSource(source.Channel(r.opts.Progress.Updates(), &handler.EnqueueRequestForObject{}))
	}
	return b.Complete(r)
}

// controllingJob is the TFJob that controls obj, if any: its controller
// reference names a TFJob of kubeflow.org, in obj's namespace (a TFJob is
// namespaced). It is what EnqueueRequestForOwner finds, without asking
// the REST mapper whether a TFJob is namespaced on every event, which
// took 3% of the manager's CPU in a catch-up.
func controllingJob(_ context.Context, obj client.Object) []reconcile.Request {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != kubeflowv1.Kind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != kubeflowv1.GroupVersion.Group {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
}

// Reconcile brings one job's pods, services and status in line with its
// spec and the observed state of its pods.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &kubeflowv1.TFJob{}
	if err := r.client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			r.forgetProgress(req.NamespacedName, "")
			r.refused.note(req.NamespacedName, false)
			return ctrl.Result{}, r.releaseOrphans(ctx, req.Namespace, req.Name, "")
		}
		return ctrl.Result{}, fmt.Errorf("reading TFJob: %w", err)
	}
	if job.DeletionTimestamp != nil {
		r.expected.forget(job.UID)
		r.forgetProgress(req.NamespacedName, "")
		return ctrl.Result{}, r.releaseOrphans(ctx, job.Namespace, job.Name, job.UID)
	}
	// Progress of an earlier job of the name, if the cache never showed
	// it gone.
	r.forgetProgress(req.NamespacedName, job.UID)
	if !managedHere(job) {
		return ctrl.Result{}, nil
	}
	kubeflowv1.Default(job)
	return r.sync(ctx, job)
}

// sync is one pass over a live job: observe, plan, write the status, then
// apply the plan and expect its writes in the cache.
func (r *Reconciler) sync(ctx context.Context, job *kubeflowv1.TFJob) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(job)
	obs, err := r.observe(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.clock.Now()
	if ok, wait := r.expected.satisfied(job.UID, job.ResourceVersion, obs, now); !ok {
		log.FromContext(ctx).V(2).Info("Waiting for the cache to show the last pass")
		return ctrl.Result{RequeueAfter: wait}, nil
	}

	p := planPass(job, obs, now, r.policy())
	if p.stepsHeld > 0 {
		r.opts.Progress.HoldUntil(job.UID, now.Add(p.stepsHeld))
	}
	written, err := r.writeStatus(ctx, job, p.status, now)
	if err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	observePass(job, obs, p.status, now)
	pend, err := r.apply(ctx, job, p)
	if err != nil {
		// The error reaches only the manager's log; users look for why pods
		// do not appear in the job's events.
		if errors.Is(err, errCreatingPod) {
			r.refused.note(key, true)
			r.recorder.Eventf(job, nil, corev1.EventTypeWarning, reasonFailedCreatePod, "Create", "%s", err.Error())
		}
		// The next pass re-plans from the cache; writes that did land are
		// idempotent to repeat.
		return ctrl.Result{}, err
	}
	r.refused.note(key, false)
	pend.staleVersion = written
	r.expected.expect(job.UID, pend, now)
	for _, e := range p.events {
		r.recorder.Eventf(job, nil, e.eventType, e.reason, e.reason, "%s", e.message)
	}
	return ctrl.Result{RequeueAfter: p.requeueAfter}, nil
}

// policy is the operator's side of a pass: its flags' defaults.
func (r *Reconciler) policy() policy {
	return policy{
		defaultCleanPodPolicy: r.opts.DefaultCleanPodPolicy,
		gang:                  r.opts.Gang,
		offlinePriorityClass:  r.opts.OfflinePriorityClass,
		stopNotice:            r.opts.StopNotice,
		retireAfter:           r.opts.RetireAfter,
		stepInterval:          progress.StepInterval,
	}
}

// forgetProgress drops the reported progress of the job named job unless
// it is of the job of UID keep, the one the cache holds: level-triggered,
// so that every pass for a name leaves the store as the cache is.
func (r *Reconciler) forgetProgress(job types.NamespacedName, keep types.UID) {
	if r.opts.Progress != nil {
		r.opts.Progress.ForgetUnless(job, keep)
	}
}

// managedHere reports whether runPolicy.managedBy leaves the job to us.
func managedHere(job *kubeflowv1.TFJob) bool {
	m := job.Spec.RunPolicy.ManagedBy
	return m == nil || *m == kubeflowv1.ManagedByTrainingOperator
}

// writeStatus writes the new status when it differs from the old one, with
// the job's resourceVersion as a precondition: a pass planned from a stale
// job must not overwrite a newer status. It returns the resourceVersion the
// job had before the write, or "" when nothing was written.
func (r *Reconciler) writeStatus(ctx context.Context, job *kubeflowv1.TFJob, status kubeflowv1.JobStatus, now time.Time) (string, error) {
	if statusEqual(job.Status, status) {
		return "", nil
	}
	before := job.ResourceVersion
	updated := job.DeepCopy()
	updated.Status = status
	t := metav1Time(now)
	updated.Status.LastReconcileTime = &t
	if err := r.client.Status().Update(ctx, updated); err != nil {
		return "", fmt.Errorf("writing TFJob status: %w", err)
	}
	return before, nil
}

// jobsWaitingToStart are the jobs whose Created condition is not True yet,
// e.g. waiting for a PriorityClass.
func (r *Reconciler) jobsWaitingToStart(ctx context.Context, _ client.Object) []reconcile.Request {
	var jobs kubeflowv1.TFJobList
	if err := r.client.List(ctx, &jobs); err != nil {
		log.FromContext(ctx).Error(err, "Listing TFJobs waiting for a PriorityClass")
		return nil
	}
	var reqs []reconcile.Request
	for i := range jobs.Items {
		if !hasCondition(&jobs.Items[i].Status, kubeflowv1.JobCreated) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&jobs.Items[i])})
		}
	}
	return reqs
}
