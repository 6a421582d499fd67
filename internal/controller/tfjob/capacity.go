package tfjob

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// A job whose pods wait for reclaimed capacity says why on its
// CapacityPending condition, which kubectl's Waiting column and `backfill
// get` show: that no node publishes any and why (the reclaim controller's
// Supply: its usage source fails, its history is short, nothing is idle),
// that the nodes publish too little now, or that a pod asks more than any
// node could ever offer; or, for a job not yet started that asks for lent
// GPUs, that no loan lasts long enough for it to reach a checkpoint
// (LoanGate). The condition is level-triggered: each pass
// derives it from the pods in the cache and the Supply in memory, and the
// status is written only when its reason or message changes.

// LoanGate holds a new job that asks for lent GPUs until a loan lasts long
// enough for it to reach a checkpoint (gpuloan.Gate): why, or "" when it
// may start, and when to ask again.
type LoanGate interface {
	Hold(job *kubeflowv1.TFJob, now time.Time) (why string, retry time.Duration)
}

// ReclaimedSupply is what reclaimed capacity the cluster offers, as the
// reclaim controller last decided it (reclaim.Controller).
type ReclaimedSupply interface {
	Supply() reclaim.Supply
	SupplyChanges() <-chan ctrlevent.TypedGenericEvent[reclaim.Supply]
}

// reasonInsufficientReclaimed: nodes publish reclaimed capacity, but none
// has enough free for the job's pods now.
const reasonInsufficientReclaimed = "InsufficientReclaimedCapacity"

// supplySettle is how long after a change of the supply the waiting jobs
// are woken: kube-scheduler retries an unschedulable pod within its
// maximum backoff (10 s by default) of a node change, so by then the pods
// that fit are bound and the others' jobs are told why they still wait,
// with no write in between.
const supplySettle = 10 * time.Second

// insufficientBatch is how kube-scheduler says a node lacks a batch
// resource, e.g. "0/3 nodes are available: 3 Insufficient
// backfill.dev/batch-cpu."
const insufficientBatch = "Insufficient backfill.dev/batch-"

// waitsForReclaimed reports whether kube-scheduler could not place the pod
// for want of reclaimed capacity on some node.
func waitsForReclaimed(pod *corev1.Pod) bool {
	return strings.Contains(unschedulable(pod), insufficientBatch)
}

// reasonLimitRangeRequest: a LimitRange's min or maxLimitRequestRatio made
// a reclaimed pod request cpu or memory, which nodes whose cpu and memory
// online pods request whole do not have.
const reasonLimitRangeRequest = "LimitRangeRequest"

// waitsForForcedRequest reports whether kube-scheduler could not place a
// pod on reclaimed capacity for want of the cpu or memory it requests:
// requests a LimitRange raised from 0 (colocation.ContainerRulesOf).
func waitsForForcedRequest(pod *corev1.Pod) bool {
	if _, reclaimed := pod.Annotations[colocation.OriginalResourcesAnnotation]; !reclaimed {
		return false
	}
	why := unschedulable(pod)
	return strings.Contains(why, "Insufficient cpu") || strings.Contains(why, "Insufficient memory")
}

// unschedulable is why kube-scheduler could not place a pending pod, or
// "".
func unschedulable(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodPending {
		return ""
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}

// noteCapacityWait keeps the job's CapacityPending condition: set while
// its pods wait for reclaimed capacity, removed once none does or the job
// is finished. Before the reclaim controller has decided (or without it)
// the manager does not know why, so the condition stays as it is.
func (p *plan) noteCapacityWait(job *kubeflowv1.TFJob, obs observed, now time.Time) {
	var waiting []*corev1.Pod
	forced := false
	for _, pod := range obs.pods {
		if waitsForReclaimed(pod) {
			waiting = append(waiting, pod)
		}
		forced = forced || waitsForForcedRequest(pod)
	}
	switch {
	case !isFinished(&p.status) && obs.loanWait != "":
		setLeadingCondition(&p.status, kubeflowv1.JobCapacityPending, colocation.ReasonGPULoanTooShort, jobMessage(job, obs.loanWait), metav1Time(now))
	case !isFinished(&p.status) && len(waiting) == 0 && forced:
		why := fmt.Sprintf("waits: a LimitRange of namespace %s (its min or maxLimitRequestRatio) makes the job's pods request cpu or memory beside their reclaimed capacity, and no node has that much unrequested; ask for the LimitRange's cpu and memory minimum and ratio to be lifted, or submit the job again with the annotation %s: %s",
			job.Namespace, colocation.CapacityAnnotation, colocation.CapacityRequested)
		setLeadingCondition(&p.status, kubeflowv1.JobCapacityPending, reasonLimitRangeRequest, jobMessage(job, why), metav1Time(now))
	case isFinished(&p.status) || len(waiting) == 0:
		removeCondition(&p.status, kubeflowv1.JobCapacityPending)
	case obs.supply != nil && obs.supply.Decided:
		reason, why := capacityWait(job, waiting, *obs.supply)
		setLeadingCondition(&p.status, kubeflowv1.JobCapacityPending, reason, jobMessage(job, why), metav1Time(now))
	}
}

// capacityWait says why pods wait for reclaimed capacity, and what to do.
// It names no amount that moves with online use, so that the message
// changes only with its reason.
func capacityWait(job *kubeflowv1.TFJob, waiting []*corev1.Pod, s reclaim.Supply) (reason, message string) {
	var asks colocation.Resources
	for _, pod := range waiting {
		asks = asks.Max(colocation.BatchOf(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})))
	}
	requested := fmt.Sprintf("or submit the job again with the annotation %s: %s to run it on the cpu and memory it requests", colocation.CapacityAnnotation, colocation.CapacityRequested)
	switch {
	case !s.Ceiling.IsZero() && !s.Ceiling.Covers(asks):
		return reclaim.ReasonExceedsReclaimableCapacity, fmt.Sprintf("cannot start: a pod asks for %s of reclaimed capacity, more than any node can ever offer (at most %s: a node's capacity less the margin and what its kubelet reserves); lower the template's cpu or memory requests, %s",
			asks, s.Ceiling, requested)
	case !s.Publishing:
		return s.Reason, "waits: its pods ask for reclaimed capacity and no node publishes any: " + s.Message + "; " + requested
	}
	return reasonInsufficientReclaimed, fmt.Sprintf("waits: its pods ask for reclaimed capacity and no node has enough free now; they start when offline pods finish or online use falls (`backfill doctor %s -n %s` shows the numbers); %s",
		job.Name, job.Namespace, requested)
}

// supplyChanged is the handler of the supply's changes: it wakes the jobs
// whose pods wait for reclaimed capacity, supplySettle later.
func (r *Reconciler) supplyChanged() handler.TypedEventHandler[reclaim.Supply, reconcile.Request] {
	return handler.TypedFuncs[reclaim.Supply, reconcile.Request]{
		GenericFunc: func(ctx context.Context, _ ctrlevent.TypedGenericEvent[reclaim.Supply], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			for _, req := range r.jobsWaitingForCapacity(ctx) {
				q.AddAfter(req, supplySettle)
			}
		},
	}
}

// jobsWaitingForCapacity are the jobs with a pod that waits for reclaimed
// capacity, from the cache.
func (r *Reconciler) jobsWaitingForCapacity(ctx context.Context) []reconcile.Request {
	var pods corev1.PodList
	// Read only, so not copied.
	if err := r.client.List(ctx, &pods, client.MatchingLabels{kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName}, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "Listing the TFJob pods that wait for reclaimed capacity")
		return nil
	}
	seen := map[client.ObjectKey]bool{}
	var reqs []reconcile.Request
	for i := range pods.Items {
		pod := &pods.Items[i]
		key := client.ObjectKey{Namespace: pod.Namespace, Name: pod.Labels[kubeflowv1.JobNameLabel]}
		if key.Name == "" || seen[key] || !waitsForReclaimed(pod) {
			continue
		}
		seen[key] = true
		reqs = append(reqs, reconcile.Request{NamespacedName: key})
	}
	return reqs
}
