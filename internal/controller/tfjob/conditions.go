package tfjob

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Condition reasons. Kubeflow v1's are "TFJob" + the transition; the
// failures backfill adds name their cause.
const (
	reasonCreated               = "TFJobCreated"
	reasonRunning               = "TFJobRunning"
	reasonRestarting            = "TFJobRestarting"
	reasonSucceeded             = "TFJobSucceeded"
	reasonFailed                = "TFJobFailed"
	reasonSuspended             = "TFJobSuspended"
	reasonResumed               = "TFJobResumed"
	reasonBackoffLimitExceeded  = "BackoffLimitExceeded"
	reasonDeadlineExceeded      = "DeadlineExceeded"
	reasonPriorityClassNotFound = "PriorityClassNotFound"
	reasonInvalidCapacity       = "InvalidCapacity"
	reasonFailedCreatePod       = "FailedCreatePod"
)

// setCondition records a condition the way Kubeflow v1 does, so that the
// last condition is the job's state: the new condition goes last; Running
// and Restarting replace each other; Succeeded, Failed and Suspended turn
// Running False. A condition that is already so is left untouched.
func setCondition(status *kubeflowv1.JobStatus, ctype kubeflowv1.JobConditionType, cstatus corev1.ConditionStatus, reason, message string, now metav1.Time) {
	if c := findCondition(status, ctype); c != nil && c.Status == cstatus && c.Reason == reason && c.Message == message {
		return
	}
	next := kubeflowv1.JobCondition{
		Type: ctype, Status: cstatus, Reason: reason, Message: message,
		LastUpdateTime: now, LastTransitionTime: now,
	}
	if c := findCondition(status, ctype); c != nil && c.Status == cstatus {
		next.LastTransitionTime = c.LastTransitionTime
	}
	var kept []kubeflowv1.JobCondition
	for _, c := range status.Conditions {
		switch {
		case c.Type == ctype:
			continue
		case ctype == kubeflowv1.JobRestarting && c.Type == kubeflowv1.JobRunning,
			ctype == kubeflowv1.JobRunning && c.Type == kubeflowv1.JobRestarting:
			continue
		case stopsRunning(ctype, cstatus) && c.Type == kubeflowv1.JobRunning && c.Status == corev1.ConditionTrue:
			c.Status = corev1.ConditionFalse
			c.LastTransitionTime = now
		}
		kept = append(kept, c)
	}
	kept = append(kept, next)
	status.Conditions = kept
}

// setLeadingCondition records a True condition that is not a state, such
// as CapacityPending: a new one goes first, so that the last condition is
// still the job's state (kubectl's State column, Kubeflow's clients,
// Kueue); one already there keeps its place and its transition time. A
// condition that is already so is left untouched.
func setLeadingCondition(status *kubeflowv1.JobStatus, ctype kubeflowv1.JobConditionType, reason, message string, now metav1.Time) {
	c := findCondition(status, ctype)
	if c == nil {
		lead := kubeflowv1.JobCondition{Type: ctype, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastUpdateTime: now, LastTransitionTime: now}
		status.Conditions = append([]kubeflowv1.JobCondition{lead}, status.Conditions...)
		return
	}
	if c.Status == corev1.ConditionTrue && c.Reason == reason && c.Message == message {
		return
	}
	if c.Status != corev1.ConditionTrue {
		c.Status, c.LastTransitionTime = corev1.ConditionTrue, now
	}
	c.Reason, c.Message, c.LastUpdateTime = reason, message, now
}

// removeCondition drops the condition of a type, if the job has one.
func removeCondition(status *kubeflowv1.JobStatus, ctype kubeflowv1.JobConditionType) {
	if findCondition(status, ctype) == nil {
		return
	}
	kept := make([]kubeflowv1.JobCondition, 0, len(status.Conditions)-1)
	for _, c := range status.Conditions {
		if c.Type != ctype {
			kept = append(kept, c)
		}
	}
	status.Conditions = kept
}

// stopsRunning reports whether a new condition ends the Running state.
func stopsRunning(ctype kubeflowv1.JobConditionType, cstatus corev1.ConditionStatus) bool {
	switch ctype {
	case kubeflowv1.JobSucceeded, kubeflowv1.JobFailed:
		return true
	case kubeflowv1.JobSuspended:
		return cstatus == corev1.ConditionTrue
	}
	return false
}

// lastCondition is the job's state.
func lastCondition(status *kubeflowv1.JobStatus) kubeflowv1.JobCondition {
	if len(status.Conditions) == 0 {
		return kubeflowv1.JobCondition{}
	}
	return status.Conditions[len(status.Conditions)-1]
}

// findCondition returns the condition of a type, or nil.
func findCondition(status *kubeflowv1.JobStatus, ctype kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == ctype {
			return &status.Conditions[i]
		}
	}
	return nil
}

// hasCondition reports whether a condition of the type is True.
func hasCondition(status *kubeflowv1.JobStatus, ctype kubeflowv1.JobConditionType) bool {
	c := findCondition(status, ctype)
	return c != nil && c.Status == corev1.ConditionTrue
}

// isFinished reports whether the job succeeded or failed; both are final.
func isFinished(status *kubeflowv1.JobStatus) bool {
	return hasCondition(status, kubeflowv1.JobSucceeded) || hasCondition(status, kubeflowv1.JobFailed)
}
