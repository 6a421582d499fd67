package tfjob

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// suspended reports whether runPolicy.suspend is set.
func suspended(job *kubeflowv1.TFJob) bool {
	s := job.Spec.RunPolicy.Suspend
	return s != nil && *s
}

// deadlineRemaining is the time left before activeDeadlineSeconds, counted
// from startTime; ok is false when the job has no deadline.
func deadlineRemaining(job *kubeflowv1.TFJob, st *kubeflowv1.JobStatus, now time.Time) (time.Duration, bool) {
	ads := job.Spec.RunPolicy.ActiveDeadlineSeconds
	if ads == nil || st.StartTime == nil {
		return 0, false
	}
	return st.StartTime.Add(time.Duration(*ads) * time.Second).Sub(now), true
}

// failPastDeadline fails a job active longer than activeDeadlineSeconds,
// and otherwise asks for a pass when its deadline comes: time alone changes
// nothing the cache would show. It reports whether the job failed.
func (p *plan) failPastDeadline(job *kubeflowv1.TFJob, obs observed, now time.Time, pol policy) bool {
	remaining, ok := deadlineRemaining(job, &p.status, now)
	if !ok {
		return false
	}
	if remaining <= 0 {
		p.fail(job, reasonDeadlineExceeded, jobMessage(job, fmt.Sprintf("has failed because it was active longer than activeDeadlineSeconds (%ds)", *job.Spec.RunPolicy.ActiveDeadlineSeconds)), obs, now, pol)
		return true
	}
	p.requeueAt(remaining)
	return false
}

// cleanPodPolicy is the job's policy, or the manager's default when unset.
func cleanPodPolicy(job *kubeflowv1.TFJob, pol policy) kubeflowv1.CleanPodPolicy {
	if p := job.Spec.RunPolicy.CleanPodPolicy; p != nil {
		return *p
	}
	return pol.defaultCleanPodPolicy
}

// finish plans what happens to a job that succeeded or failed: its pods are
// deleted as cleanPodPolicy says, every tracking finalizer is released, and
// the job itself is deleted ttlSecondsAfterFinished after it finished. A
// finished job never creates a pod again.
func (p *plan) finish(job *kubeflowv1.TFJob, obs observed, now time.Time, pol policy) {
	p.createPods, p.createServices = nil, nil
	clean := cleanPodPolicy(job, pol)
	reason := lastCondition(&p.status).Reason
	for _, pod := range sortedPods(obs.pods) {
		p.release(pod)
		running := pod.Status.Phase == corev1.PodPending || pod.Status.Phase == corev1.PodRunning
		if clean == kubeflowv1.CleanPodPolicyAll || (clean == kubeflowv1.CleanPodPolicyRunning && running) {
			p.stop(pod, reason, now, pol.stopNotice)
		}
	}
	if clean != kubeflowv1.CleanPodPolicyNone {
		p.deleteAllServices(obs)
	}
	p.countActive(job, obs)

	ttl := job.Spec.RunPolicy.TTLSecondsAfterFinished
	if ttl == nil || p.status.CompletionTime == nil {
		return
	}
	left := p.status.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(now)
	if left > 0 {
		p.requeueAt(left)
		return
	}
	p.deleteJob = true
	p.emit(corev1.EventTypeNormal, "TTLExpired", jobMessage(job, fmt.Sprintf("is deleted %ds after it finished (ttlSecondsAfterFinished)", *ttl)))
}

// suspend plans a suspended job: no pods and no services, a Suspended
// condition, and no startTime, so that the deadline counts from the resume.
// The pods it stops join countedPods: if the job resumes before they are
// gone, their end is the operator's doing, not a disruption.
func (p *plan) suspend(job *kubeflowv1.TFJob, obs observed, now time.Time, pol policy) {
	// Only the pass that suspends interrupts; later ones leave the account be.
	p.seen.Suspended = !hasCondition(&p.status, kubeflowv1.JobSuspended)
	counted := sets.New(p.status.CountedPods...)
	for _, pod := range sortedPods(obs.pods) {
		p.release(pod)
		p.stop(pod, reasonSuspended, now, pol.stopNotice)
		if pod.Status.Phase != corev1.PodSucceeded {
			counted.Insert(string(pod.UID))
		}
	}
	p.status.CountedPods = sets.List(counted)
	p.deleteAllServices(obs)
	p.status.StartTime = nil
	reason, message := suspendedBecause(job)
	if !hasCondition(&p.status, kubeflowv1.JobSuspended) {
		p.emit(corev1.EventTypeNormal, reason, message)
	}
	setCondition(&p.status, kubeflowv1.JobSuspended, corev1.ConditionTrue, reason, message, metav1Time(now))
	p.countActive(job, obs)
}

// suspendedBecause is the reason and message of a suspended job's
// condition: the manager's GPU loans say why they paused it and when it
// may borrow again (colocation.GPULoanPausedAnnotation); any other
// suspension is the user's or Kueue's.
func suspendedBecause(job *kubeflowv1.TFJob) (reason, message string) {
	if why, ok := job.Annotations[colocation.GPULoanPausedAnnotation]; ok && why != "" {
		return colocation.ReasonGPUsReturnedToOnline, jobMessage(job, "is paused: it "+why)
	}
	return reasonSuspended, jobMessage(job, "is suspended")
}

// resume undoes suspend once runPolicy.suspend is unset: the Suspended
// condition turns False and startTime is cleared, so that the deadline
// counts from the resume.
func (p *plan) resume(job *kubeflowv1.TFJob, now time.Time) {
	if !hasCondition(&p.status, kubeflowv1.JobSuspended) {
		return
	}
	setCondition(&p.status, kubeflowv1.JobSuspended, corev1.ConditionFalse, reasonResumed, jobMessage(job, "is resumed"), metav1Time(now))
	p.status.StartTime = nil
	p.emit(corev1.EventTypeNormal, reasonResumed, jobMessage(job, "is resumed"))
}

// countActive refreshes the running-pod counts of a job that starts no pods.
func (p *plan) countActive(job *kubeflowv1.TFJob, obs observed) {
	for _, rtype := range replicaTypes(job) {
		rs := replicaStatusFor(&p.status, job.Name, rtype)
		rs.Active = 0
		for i := 0; i < int(job.Spec.TFReplicaSpecs[rtype].ReplicaCount()); i++ {
			pod := obs.pods[replicaName(job.Name, rtype, i)]
			if pod != nil && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && !p.deleting(pod) {
				rs.Active++
			}
		}
	}
}

// deleting reports whether the plan deletes the pod.
func (p *plan) deleting(pod *corev1.Pod) bool {
	for _, d := range p.deletePods {
		if d.UID == pod.UID {
			return true
		}
	}
	return false
}

func (p *plan) deleteAllServices(obs observed) {
	for _, name := range sortedNames(obs.services) {
		if svc := obs.services[name]; svc.DeletionTimestamp == nil {
			p.deleteServices = append(p.deleteServices, svc)
		}
	}
}
