package cli

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// What the manager does with a job where the job leaves it to the
// manager, as get and describe show it. The CLI cannot read the manager's
// flags: where they decide, it shows what the job's pods got, else the
// default and the flag that changes it.

// managerDefaultCleanPodPolicy is the cleanPodPolicy the manager applies
// to a job that sets none, unless it runs with --default-clean-pod-policy.
const managerDefaultCleanPodPolicy = kubeflowv1.CleanPodPolicyRunning

// cleanPodPolicyInWords is the job's cleanPodPolicy, or the manager's
// default where it sets none.
func cleanPodPolicyInWords(rp *kubeflowv1.RunPolicy) string {
	if rp.CleanPodPolicy != nil {
		return string(*rp.CleanPodPolicy)
	}
	return string(managerDefaultCleanPodPolicy) + " (the manager's default, --default-clean-pod-policy)"
}

// queuedState is the state of a job that waits in a Kueue queue.
const queuedState = "Queued"

// pausedState is the state of a job the manager's GPU loans paused: it
// returned its GPUs to online work and waits for its next loan.
const pausedState = "Paused"

// pausedByLoan says why the manager's GPU loans paused the job and when
// it may borrow again ("returned 4 GPUs of pool … to online work at …,
// next loan from ~…"): the job's colocation.GPULoanPausedAnnotation, which
// the operator copies into its Suspended condition. ok is false unless
// the job is suspended for it and not done.
func pausedByLoan(job *kubeflowv1.TFJob) (why string, ok bool) {
	if isDone(job) {
		return "", false
	}
	why = job.Annotations[colocation.GPULoanPausedAnnotation]
	c := jobCondition(job, kubeflowv1.JobSuspended)
	byCondition := c != nil && c.Status == corev1.ConditionTrue && c.Reason == colocation.ReasonGPUsReturnedToOnline
	suspended := job.Spec.RunPolicy.Suspend != nil && *job.Spec.RunPolicy.Suspend
	switch {
	case byCondition && why == "":
		return c.Message, true
	case byCondition || (suspended && why != ""):
		return why, true
	}
	return "", false
}

// stateOf is the job's state as get and describe show it: jobState, but a
// job that waits in a Kueue queue (suspended, with a queue-name label)
// shows Queued unless it is done, a job GPU loans paused shows Paused, and
// a job the operator holds back before it starts (its Created condition
// is False: a PriorityClass that does not exist, an invalid capacity
// annotation) shows why instead of Pending, which is for a job the
// operator has not seen yet.
func stateOf(job *kubeflowv1.TFJob) string {
	if queueing.Queued(job) && !isDone(job) {
		return queuedState
	}
	if _, ok := pausedByLoan(job); ok {
		return pausedState
	}
	state := jobState(job)
	if c := jobCondition(job, kubeflowv1.JobCreated); state == "Pending" && c != nil && c.Status == corev1.ConditionFalse {
		if c.Reason != "" {
			return c.Reason
		}
		return "Held"
	}
	return state
}

// jobStateInWords is stateOf for describe, which says what a queued or
// held job means.
func jobStateInWords(job *kubeflowv1.TFJob) string {
	state := stateOf(job)
	if state == queuedState {
		return queuedState + " (suspended in LocalQueue " + queueing.QueueName(job) + ": no pod runs until Kueue admits the job, see Queue)"
	}
	if why, ok := pausedByLoan(job); ok {
		return pausedState + " (by GPU loans: " + why + "; the manager resumes it when a loan is long enough)"
	}
	if state != jobState(job) {
		return state + " (held: the operator creates no pod until this is fixed, see Conditions)"
	}
	return jobState(job)
}

// podPriorityClasses are the distinct PriorityClasses the job's pods run
// with, in the order of its pods; nil when it has no pod with one.
func podPriorityClasses(pods []corev1.Pod) []string {
	var names []string
	for i := range pods {
		if name := pods[i].Spec.PriorityClassName; name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// priorityClassShown is the PriorityClass of the job's pods as get shows
// it: what its pods got (the manager's --offline-priority-class need not
// be the default), else what the operator will give them.
func priorityClassShown(job *kubeflowv1.TFJob, pods []corev1.Pod) string {
	if names := podPriorityClasses(pods); len(names) > 0 {
		return strings.Join(names, ",")
	}
	return priorityClassOf(job)
}

// priorityClassInWords is priorityClassShown for describe: before the job
// has pods, a replica type that names no class gets the manager's offline
// class, backfill-offline unless it runs with --offline-priority-class.
func priorityClassInWords(job *kubeflowv1.TFJob, pods []corev1.Pod) string {
	if names := podPriorityClasses(pods); len(names) > 0 {
		return strings.Join(names, ", ")
	}
	var names []string
	for _, rtype := range replicaTypes(job) {
		name := colocation.ReplicaPriorityClass(job, rtype, "")
		if name == "" {
			name = colocation.DefaultOfflinePriorityClass + " (the manager's default, --offline-priority-class)"
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return orNone(strings.Join(names, ", "))
}
