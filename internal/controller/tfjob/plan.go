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
	// running: every replica that should run does; interrupted: the pass
	// suspended the job. Both feed the goodput account.
	running, interrupted bool
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
	p.retire(job, pol)
	progress.Account(&job.Status, &p.status, job.CreationTimestamp.Time, now, p.running, p.interrupted)
	p.settleProgress(&job.Status, obs.progress, held)
	p.retireIfDone(job, obs, now, pol)
	return p
}

// decide is planPass's decisions but for the progress and goodput.
func (p *plan) decide(job *kubeflowv1.TFJob, obs observed, now time.Time, pol policy) {
	st := &p.status
	mnow := metav1Time(now)
	st.CountedPods = liveCounted(st.CountedPods, obs.pods)

	if isFinished(st) {
		p.finish(job, obs, now, pol)
		return
	}
	if suspended(job) {
		p.suspend(job, obs, now, pol)
		return
	}
	if hasCondition(st, kubeflowv1.JobSuspended) {
		setCondition(st, kubeflowv1.JobSuspended, corev1.ConditionFalse, reasonResumed, jobMessage(job, "is resumed"), mnow)
		st.StartTime = nil
		p.emit(corev1.EventTypeNormal, reasonResumed, jobMessage(job, "is resumed"))
	}
	starting := !hasCondition(st, kubeflowv1.JobCreated)
	capacityErr := colocation.ValidateCapacity(job.Annotations)
	switch {
	case starting && capacityErr != nil:
		p.hold(reasonInvalidCapacity, jobMessage(job, "cannot start its pods: "+capacityErr.Error()), mnow)
		return
	case starting && len(obs.missingPriorityClasses) > 0:
		p.hold(reasonPriorityClassNotFound, priorityClassMessage(job, obs), mnow)
		return
	}
	if starting {
		setCondition(st, kubeflowv1.JobCreated, corev1.ConditionTrue, reasonCreated, jobMessage(job, "is created"), mnow)
	}
	if st.StartTime == nil {
		st.StartTime = &mnow
	}
	if remaining, ok := deadlineRemaining(job, st, now); ok {
		if remaining <= 0 {
			p.fail(job, reasonDeadlineExceeded, jobMessage(job, fmt.Sprintf("has failed because it was active longer than activeDeadlineSeconds (%ds)", *job.Spec.RunPolicy.ActiveDeadlineSeconds)), obs, now, pol)
			return
		}
		p.requeueAt(remaining)
	}

	counts := restartCounts{st.Restarts, st.Disruptions, st.CountedPods}
	r := p.observeReplicas(job, obs)
	if r.failure != "" {
		counts.restore(st)
		p.fail(job, reasonFailed, r.failure, obs, now, pol)
		return
	}
	if limit := job.Spec.RunPolicy.BackoffLimit; limit != nil && (r.backoffExceeded || st.Restarts+r.inPlaceRestarts > *limit) {
		restarts := st.Restarts + r.inPlaceRestarts
		why := fmt.Sprintf("it restarted %d times, more than backoffLimit %d", restarts, *limit)
		if r.backoffExceeded {
			why = fmt.Sprintf("a replica failed after %d restarts, the most backoffLimit %d allows", restarts, *limit)
		}
		counts.restore(st)
		p.fail(job, reasonBackoffLimitExceeded, jobMessage(job, "has failed because "+why), obs, now, pol)
		return
	}
	if succeeded(job, st) {
		counts.restore(st)
		setCondition(st, kubeflowv1.JobSucceeded, corev1.ConditionTrue, reasonSucceeded, jobMessage(job, "successfully completed"), mnow)
		st.CompletionTime = &mnow
		p.emit(corev1.EventTypeNormal, reasonSucceeded, jobMessage(job, "successfully completed"))
		p.finish(job, obs, now, pol)
		return
	}

	for _, e := range r.events {
		p.emit(e.eventType, e.reason, e.message)
	}
	p.running = r.allRunning
	switch {
	case r.restartReason != "":
		setCondition(st, kubeflowv1.JobRestarting, corev1.ConditionTrue, r.restartReason, r.restartMessage, mnow)
	case r.decidingRunning && (r.allRunning || lastCondition(st).Type != kubeflowv1.JobRestarting):
		// A job restarting stays so until every replica runs again: one
		// still waiting leaves it degraded, however the rest run.
		setCondition(st, kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, jobMessage(job, "is running"), mnow)
	}
	for _, id := range allReplicas(job) {
		if _, ok := obs.services[replicaName(job.Name, id.rtype, id.index)]; !ok && !obs.takenServices.Has(replicaName(job.Name, id.rtype, id.index)) {
			p.createServices = append(p.createServices, id)
		}
	}
	switch {
	case len(p.createPods) == 0:
	case capacityErr != nil:
		p.createPods = nil
		p.emit(corev1.EventTypeWarning, reasonInvalidCapacity, jobMessage(job, "cannot recreate its pods: "+capacityErr.Error()))
	case len(obs.missingPriorityClasses) > 0:
		p.createPods = nil
		p.emit(corev1.EventTypeWarning, reasonPriorityClassNotFound, priorityClassMessage(job, obs))
	}
	p.planGang(job, obs, pol, starting)
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

// replicaScan is what observeReplicas learned about the replicas.
type replicaScan struct {
	// failure says why the job failed, if a replica failed for good.
	failure string
	// restartReason and restartMessage describe the restarts of this pass.
	restartReason, restartMessage string
	// inPlaceRestarts are the container restarts of live pods not yet
	// counted in status.restarts.
	inPlaceRestarts int32
	// decidingRunning: a pod of the type that decides success is running.
	decidingRunning bool
	// allRunning: every replica not done has a running pod.
	allRunning bool
	// backoffExceeded: a replica failed with no restart left.
	backoffExceeded bool
	// events announce the restarts; emitted only if the job goes on.
	events []event
}

// restartCounts are the status fields a pass's restarts change. A pass
// that finishes the job restores them: its ended pods are cleaned up, not
// restarted, so nothing is counted.
type restartCounts struct {
	restarts, disruptions int32
	countedPods           []string
}

func (c restartCounts) restore(st *kubeflowv1.JobStatus) {
	st.Restarts, st.Disruptions, st.CountedPods = c.restarts, c.disruptions, c.countedPods
}

// observeReplicas walks every replica: it records succeeded indexes and
// replica counts, counts each ended pod once (its UID joins
// status.countedPods), schedules its replacement, and plans the pods to
// create. Pods carry a tracking finalizer, so an ended pod stays visible
// until its end is counted here and written.
func (p *plan) observeReplicas(job *kubeflowv1.TFJob, obs observed) replicaScan {
	st := &p.status
	counted := sets.New(st.CountedPods...)
	var scan replicaScan
	restarted, disrupted := 0, map[string]int{}
	deciding := decidingType(job)
	scan.allRunning = true

	for _, rtype := range replicaTypes(job) {
		rs := replicaStatusFor(st, job.Name, rtype)
		done := sets.New(rs.SucceededIndexes...)
		rs.Active, rs.Failed = 0, 0
		failedHere := 0
		for i := 0; i < int(replicas(job.Spec.TFReplicaSpecs[rtype])); i++ {
			name := replicaName(job.Name, rtype, i)
			pod := obs.pods[name]
			if !done.Has(int32(i)) && (pod == nil || pod.DeletionTimestamp != nil ||
				(pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != corev1.PodSucceeded)) {
				scan.allRunning = false
			}
			switch {
			case pod == nil:
				if !done.Has(int32(i)) && !obs.takenPods.Has(name) {
					p.createPods = append(p.createPods, replicaID{rtype, i})
				}
				continue
			case pod.Status.Phase == corev1.PodSucceeded:
				done.Insert(int32(i))
				p.release(pod)
				continue
			case pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodFailed:
				if pod.Status.Phase == corev1.PodRunning {
					rs.Active++
				}
				scan.inPlaceRestarts += containerRestarts(pod)
				continue
			}

			// The pod ended, or is being deleted, before it succeeded.
			if pod.Status.Phase == corev1.PodFailed {
				rs.Failed++
			}
			if !counted.Has(string(pod.UID)) {
				action, reason := onEndedPod(job.Spec.TFReplicaSpecs[rtype].RestartPolicy, pod)
				switch {
				case action == restartDisrupted:
					st.Disruptions++
					disrupted[reason]++
				case action == restartReplica && backoffExhausted(job, st.Restarts+scan.inPlaceRestarts):
					scan.backoffExceeded = true
					continue
				case action == restartReplica:
					st.Restarts += 1 + containerRestarts(pod)
					restarted++
				case rtype == kubeflowv1.ReplicaTypeWorker && job.Spec.EnableDynamicWorker:
					// Dynamic workers may come and go, as in Kubeflow v1.
					continue
				default:
					failedHere++
					continue
				}
				counted.Insert(string(pod.UID))
			}
			p.release(pod)
			p.delete(pod)
		}
		rs.SucceededIndexes = sortedIndexes(done)
		rs.Succeeded = int32(len(done))
		if failedHere > 0 && scan.failure == "" {
			scan.failure = jobMessage(job, fmt.Sprintf("has failed because %d %s replica(s) failed", failedHere, rtype))
		}
		if rtype == deciding && rs.Active > 0 {
			scan.decidingRunning = true
		}
	}
	st.CountedPods = sets.List(counted)

	if restarted > 0 {
		scan.restartReason = reasonRestarting
		scan.restartMessage = jobMessage(job, fmt.Sprintf("is restarting because %d replica(s) failed", restarted))
		scan.events = append(scan.events, event{corev1.EventTypeWarning, reasonRestarting, scan.restartMessage})
	}
	for _, reason := range sortedKeys(disrupted) {
		msg := jobMessage(job, fmt.Sprintf("is restarting %d replica(s) ended by %s; not charged to backoffLimit", disrupted[reason], reason))
		scan.events = append(scan.events, event{corev1.EventTypeWarning, reason, msg})
		scan.restartReason, scan.restartMessage = reason, msg
	}
	return scan
}

// backoffExhausted reports whether one more restart would exceed the
// job's backoffLimit.
func backoffExhausted(job *kubeflowv1.TFJob, restarts int32) bool {
	limit := job.Spec.RunPolicy.BackoffLimit
	return limit != nil && restarts >= *limit
}

// succeeded applies the success policy: the chief when there is one,
// otherwise worker 0, or every worker under AllWorkers.
func succeeded(job *kubeflowv1.TFJob, st *kubeflowv1.JobStatus) bool {
	rtype := decidingType(job)
	rs := st.ReplicaStatuses[rtype]
	if rs == nil {
		return false
	}
	if rtype == kubeflowv1.ReplicaTypeWorker && job.Spec.SuccessPolicy != nil && *job.Spec.SuccessPolicy == kubeflowv1.SuccessPolicyAllWorkers {
		return rs.Succeeded >= replicas(job.Spec.TFReplicaSpecs[rtype])
	}
	return slices.Contains(rs.SucceededIndexes, 0)
}

// decidingType is the replica type whose success is the job's: Chief or
// Master when it runs a replica, else Worker.
func decidingType(job *kubeflowv1.TFJob) kubeflowv1.ReplicaType {
	for _, t := range []kubeflowv1.ReplicaType{kubeflowv1.ReplicaTypeChief, kubeflowv1.ReplicaTypeMaster} {
		if replicas(job.Spec.TFReplicaSpecs[t]) > 0 {
			return t
		}
	}
	return kubeflowv1.ReplicaTypeWorker
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
		for i := 0; i < int(replicas(job.Spec.TFReplicaSpecs[t])); i++ {
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
