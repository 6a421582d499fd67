package tfjob

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/progress"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// observed is what one pass sees of a job's children in the cache.
type observed struct {
	// pods and services owned by the job, by name.
	pods     map[string]*corev1.Pod
	services map[string]*corev1.Service
	// takenPods and takenServices are names held by objects the job does
	// not own; the job waits for them to go rather than adopt them.
	takenPods, takenServices sets.Set[string]
	// strays are pods that are not replicas but carry the job's tracking
	// finalizer and ended (see stray): released, never counted.
	strays []*corev1.Pod
	// hasPodGroup: the job's gang PodGroup exists.
	hasPodGroup bool
	// missingPriorityClasses are PriorityClasses the job's pods name that
	// do not exist; pods naming them would be refused.
	missingPriorityClasses []string
	// progress is what the job's training code reported since the status
	// was last written, if anything.
	progress *kubeflowv1.Progress
	// supply is what reclaimed capacity the cluster offers, as the reclaim
	// controller last decided it; nil without reclaimed capacity.
	supply *reclaim.Supply
	// loanWait says why a job not yet started waits for a longer GPU loan
	// (LoanGate), "" if it does not; loanRetry is when to ask again.
	loanWait  string
	loanRetry time.Duration
}

// replicaID names one replica of a job.
type replicaID struct {
	rtype kubeflowv1.ReplicaType
	index int
}

// event is a Kubernetes event to emit once the status is written.
type event struct {
	eventType, reason, message string
}

// plan is everything one pass decided: the new status, then the writes that
// follow it. Pods are deleted only after the status that counts their
// restart is written, so a count survives an operator crash exactly once.
type plan struct {
	status         kubeflowv1.JobStatus
	createPods     []replicaID
	createServices []replicaID
	deletePods     []*corev1.Pod
	// notices are stop notices to write before stopping pods.
	notices []stopNotice
	// releasePods lose the tracking finalizer: their end is recorded.
	releasePods []*corev1.Pod
	// retirePods, of releasePods, leave the manager's cache (RetiredLabel).
	retirePods     map[types.UID]bool
	deleteServices []*corev1.Service
	deleteJob      bool
	// retiring: the job is finished and done with; it and what it keeps
	// (kept) leave the manager's cache (RetiredLabel).
	retiring bool
	kept     []client.Object
	// createPodGroup creates the job's gang, of priority podGroupClass;
	// gangPods joins new pods to it.
	createPodGroup, gangPods bool
	podGroupClass            string
	events                   []event
	requeueAfter             time.Duration
	// stepsHeld is how long the reported step waits to be written
	// (takeProgress), when it does.
	stepsHeld time.Duration
	// checkpointed is when the job last reported a durable checkpoint:
	// a pod given a stop notice before it may stop at once.
	checkpointed time.Time
	// seen is what the goodput account follows beside the status.
	seen progress.Pass
}

// policy holds the manager-wide settings a plan depends on.
type policy struct {
	defaultCleanPodPolicy kubeflowv1.CleanPodPolicy
	// gang is the cluster's gang scheduler, if any.
	gang colocation.GangScheduler
	// offlinePriorityClass is the PriorityClass of pods that name none.
	offlinePriorityClass string
	// stopNotice is how long a pod the operator stops is told in advance.
	stopNotice time.Duration
	// retireAfter is how long a finished job stays before it is retired.
	retireAfter time.Duration
	// stepInterval is how often at most reported steps alone write the
	// status (progress.StepInterval).
	stepInterval time.Duration
}

// planPass decides one reconcile pass for a job, given what the cache holds
// and the time. It is pure: the reconciler does the writes.
func planPass(job *kubeflowv1.TFJob, obs observed, now time.Time, pol policy) *plan {
	p := &plan{status: *job.Status.DeepCopy()}
	held := p.takeProgress(&job.Status, obs.progress, now, pol.stepInterval)
	if c := p.status.Progress; c != nil && c.CheckpointTime != nil {
		p.checkpointed = c.CheckpointTime.Time
	}
	p.decide(job, obs, now, pol)
	p.noteCapacityWait(job, obs, now)
	for _, pod := range obs.strays {
		p.release(pod)
	}
	p.retireSucceededPods(job, pol)
	progress.Account(&job.Status, &p.status, job.CreationTimestamp.Time, now, p.seen)
	p.settleProgress(&job.Status, obs.progress, held)
	p.retireJobWhenDone(job, obs, now, pol)
	return p
}

// decide is planPass's decisions but for the progress and goodput: a
// sequence of steps, where a finished, suspended, held or ending job stops
// early.
func (p *plan) decide(job *kubeflowv1.TFJob, obs observed, now time.Time, pol policy) {
	p.status.CountedPods = liveCounted(p.status.CountedPods, obs.pods)
	if isFinished(&p.status) {
		p.finish(job, obs, now, pol)
		return
	}
	if suspended(job) {
		p.suspend(job, obs, now, pol)
		return
	}
	p.resume(job, now)
	starting := !hasCondition(&p.status, kubeflowv1.JobCreated)
	capacityErr := colocation.ValidateCapacity(job.Annotations)
	if !p.start(job, obs, starting, capacityErr, now) {
		return
	}
	if p.failPastDeadline(job, obs, now, pol) {
		return
	}
	// Taken before the scan counts restarts: a pass that ends the job
	// restores them.
	counts := restartCountsOf(&p.status)
	scan := p.observeReplicas(job, obs)
	if p.endByReplicas(job, obs, scan, counts, now, pol) {
		return
	}
	p.reportReplicas(job, scan, now)
	p.createMissingServices(job, obs)
	p.withholdPods(job, obs, capacityErr)
	p.planGang(job, obs, pol, starting)
}

// start marks a job Created on its first pass, and stamps its startTime
// then and after a resume. It reports false, and holds the job, while a
// job not yet started names something wrong; a job that started keeps
// going (see withholdPods).
func (p *plan) start(job *kubeflowv1.TFJob, obs observed, starting bool, capacityErr error, now time.Time) bool {
	mnow := metav1Time(now)
	switch {
	case !starting:
	case capacityErr != nil:
		p.hold(reasonInvalidCapacity, jobMessage(job, "cannot start its pods: "+capacityErr.Error()), mnow)
		return false
	case len(obs.missingPriorityClasses) > 0:
		p.hold(reasonPriorityClassNotFound, priorityClassMessage(job, obs), mnow)
		return false
	case obs.loanWait != "":
		// CapacityPending says why (noteCapacityWait).
		p.requeueAt(obs.loanRetry)
		return false
	default:
		setCondition(&p.status, kubeflowv1.JobCreated, corev1.ConditionTrue, reasonCreated, jobMessage(job, "is created"), mnow)
	}
	if p.status.StartTime == nil {
		p.status.StartTime = &mnow
	}
	return true
}

// endByReplicas ends the job when its replicas decide it: one failed for
// good, the restarts exceed backoffLimit, or the success policy is met. It
// reports whether the job ended; if so, the pass restarts nothing and
// counts back what observeReplicas counted (see restartCounts).
func (p *plan) endByReplicas(job *kubeflowv1.TFJob, obs observed, scan replicaScan, counts restartCounts, now time.Time, pol policy) bool {
	backoffFailure, backoffExceeded := backoffLimitExceeded(job, &p.status, scan)
	switch {
	case scan.failure != "":
		counts.restore(&p.status)
		p.fail(job, reasonFailed, scan.failure, obs, now, pol)
	case backoffExceeded:
		counts.restore(&p.status)
		p.fail(job, reasonBackoffLimitExceeded, backoffFailure, obs, now, pol)
	case succeeded(job, &p.status):
		counts.restore(&p.status)
		p.succeed(job, obs, now, pol)
	default:
		return false
	}
	return true
}

// reportReplicas tells of a job that goes on: the restarts' events, and
// whether it runs or restarts.
func (p *plan) reportReplicas(job *kubeflowv1.TFJob, scan replicaScan, now time.Time) {
	for _, e := range scan.events {
		p.emit(e.eventType, e.reason, e.message)
	}
	p.seen.AllRunning = scan.allRunning
	switch {
	case scan.restartReason != "":
		setCondition(&p.status, kubeflowv1.JobRestarting, corev1.ConditionTrue, scan.restartReason, scan.restartMessage, metav1Time(now))
	case scan.decidingRunning && (scan.allRunning || lastCondition(&p.status).Type != kubeflowv1.JobRestarting):
		// A job restarting stays so until every replica runs again: one
		// still waiting leaves it degraded, however the rest run.
		setCondition(&p.status, kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, jobMessage(job, "is running"), metav1Time(now))
	}
}

// createMissingServices plans the service of every replica that has none,
// unless another object holds its name.
func (p *plan) createMissingServices(job *kubeflowv1.TFJob, obs observed) {
	for _, id := range allReplicas(job) {
		name := replicaName(job.Name, id.rtype, id.index)
		if _, ok := obs.services[name]; !ok && !obs.takenServices.Has(name) {
			p.createServices = append(p.createServices, id)
		}
	}
}

// withholdPods keeps a started job from recreating pods while something it
// names is wrong, as hold says; an event says why.
func (p *plan) withholdPods(job *kubeflowv1.TFJob, obs observed, capacityErr error) {
	switch {
	case len(p.createPods) == 0:
	case capacityErr != nil:
		p.createPods = nil
		p.emit(corev1.EventTypeWarning, reasonInvalidCapacity, jobMessage(job, "cannot recreate its pods: "+capacityErr.Error()))
	case len(obs.missingPriorityClasses) > 0:
		p.createPods = nil
		p.emit(corev1.EventTypeWarning, reasonPriorityClassNotFound, priorityClassMessage(job, obs))
	}
}

// hold keeps a job from starting its pods while something it names is
// wrong: a PriorityClass that does not exist (the apiserver would refuse
// every pod) or an invalid backfill.dev/capacity annotation. The job says
// why in its Created condition and an event, and starts once it is fixed.
func (p *plan) hold(reason, msg string, now metav1.Time) {
	if c := findCondition(&p.status, kubeflowv1.JobCreated); c == nil || c.Message != msg {
		p.emit(corev1.EventTypeWarning, reason, msg)
	}
	setCondition(&p.status, kubeflowv1.JobCreated, corev1.ConditionFalse, reason, msg, now)
}

func priorityClassMessage(job *kubeflowv1.TFJob, obs observed) string {
	return jobMessage(job, fmt.Sprintf("cannot start its pods: PriorityClass %s does not exist; create it, or name an existing one in spec.runPolicy.schedulingPolicy.priorityClass or the pod template's priorityClassName",
		strings.Join(obs.missingPriorityClasses, ", ")))
}

// fail marks the job Failed and cleans up after it.
func (p *plan) fail(job *kubeflowv1.TFJob, reason, message string, obs observed, now time.Time, pol policy) {
	mnow := metav1Time(now)
	setCondition(&p.status, kubeflowv1.JobFailed, corev1.ConditionTrue, reason, message, mnow)
	p.status.CompletionTime = &mnow
	p.createPods = nil
	p.emit(corev1.EventTypeWarning, reason, message)
	p.finish(job, obs, now, pol)
}

// release schedules the removal of a pod's tracking finalizer, once.
func (p *plan) release(pod *corev1.Pod) {
	if hasTrackingFinalizer(pod) && !containsPod(p.releasePods, pod) {
		p.releasePods = append(p.releasePods, pod)
	}
}

// delete schedules the deletion of a pod not yet being deleted, once.
func (p *plan) delete(pod *corev1.Pod) {
	if pod.DeletionTimestamp == nil && !containsPod(p.deletePods, pod) {
		p.deletePods = append(p.deletePods, pod)
	}
}

func containsPod(pods []*corev1.Pod, pod *corev1.Pod) bool {
	return slices.ContainsFunc(pods, func(q *corev1.Pod) bool { return q.UID == pod.UID })
}

// emit queues an event.
func (p *plan) emit(eventType, reason, message string) {
	p.events = append(p.events, event{eventType, reason, message})
}

// requeueAt asks for another pass after d, keeping the earliest request.
func (p *plan) requeueAt(d time.Duration) {
	if p.requeueAfter == 0 || d < p.requeueAfter {
		p.requeueAfter = d
	}
}

// jobMessage is a condition or event message about the job, worded as
// Kubeflow v1 words them.
func jobMessage(job *kubeflowv1.TFJob, what string) string {
	return fmt.Sprintf("TFJob %s/%s %s.", job.Namespace, job.Name, what)
}

// replicaStatusFor returns the status entry of a replica type, creating it.
func replicaStatusFor(st *kubeflowv1.JobStatus, jobName string, rtype kubeflowv1.ReplicaType) *kubeflowv1.ReplicaStatus {
	if st.ReplicaStatuses == nil {
		st.ReplicaStatuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{}
	}
	rs := st.ReplicaStatuses[rtype]
	if rs == nil {
		rs = &kubeflowv1.ReplicaStatus{}
		st.ReplicaStatuses[rtype] = rs
	}
	rs.Selector = replicaTypeSelector(jobName, rtype)
	rs.LabelSelector = &metav1.LabelSelector{MatchLabels: replicaTypeLabels(jobName, rtype)} //nolint:staticcheck // v1 clients still read it
	return rs
}

// replicaTypes are the job's replica types in a stable order.
func replicaTypes(job *kubeflowv1.TFJob) []kubeflowv1.ReplicaType {
	var types []kubeflowv1.ReplicaType
	for _, t := range kubeflowv1.ReplicaTypes {
		if job.Spec.TFReplicaSpecs[t] != nil {
			types = append(types, t)
		}
	}
	return types
}

// allReplicas lists every replica of the job.
func allReplicas(job *kubeflowv1.TFJob) []replicaID {
	var ids []replicaID
	for _, t := range replicaTypes(job) {
		for i := 0; i < int(job.Spec.TFReplicaSpecs[t].ReplicaCount()); i++ {
			ids = append(ids, replicaID{t, i})
		}
	}
	return ids
}

// liveCounted keeps the counted pod UIDs whose pods still exist; once a
// pod is gone its count needs no more guarding.
func liveCounted(counted []string, pods map[string]*corev1.Pod) []string {
	live := sets.New[string]()
	for _, pod := range pods {
		live.Insert(string(pod.UID))
	}
	var kept []string
	for _, uid := range counted {
		if live.Has(uid) {
			kept = append(kept, uid)
		}
	}
	return kept
}

func sortedIndexes(s sets.Set[int32]) []int32 {
	if s.Len() == 0 {
		return nil
	}
	return sets.List(s)
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
