package doctor

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Pods the apiserver refuses at creation never appear: the job waits
// without pods, and only the operator's FailedCreatePod event on the job
// says why. Three checks explain them: resource-quota and limit-range,
// from that event and from what the namespace's quotas and LimitRanges
// say of the pods the operator sends, and pod-create for any other
// refusal.

// jobRefusal is why an active job's missing pods are not created.
type jobRefusal struct {
	job     *kubeflowv1.TFJob
	missing int
	// refused is the newest refusal the operator recorded since it last
	// created all the pods it tried, if any.
	refused *refusalEvent
	reasons []refusalReason
}

// refusalReason is one rule that refuses a job's pods.
type refusalReason struct {
	check string
	// status is FAIL, or WARN for a rule that refused a pod but admits
	// it now (the operator's next try should succeed).
	status       Status
	finding, fix string
	// seen: the apiserver's refusal named this rule.
	seen bool
}

// refusalEvent is the operator's record of the apiserver refusing a pod.
type refusalEvent struct {
	message string
	// ago is how long ago it last happened.
	ago    string
	parsed apiRefusal
	ok     bool
}

// refusalsOf explains the active jobs that miss pods; jobs held for a
// missing PriorityClass are left to that check.
func refusalsOf(s *Snapshot, jobs []*kubeflowv1.TFJob) []jobRefusal {
	var out []jobRefusal
	for _, j := range jobs {
		missing := s.missingPods(j)
		if missing == 0 || blockedByPriorityClass(j) {
			continue
		}
		r := jobRefusal{job: j, missing: missing, refused: s.lastRefusal(j)}
		pods := s.missingByType(j)
		reclaimed := slices.ContainsFunc(pods, func(m missingReplicas) bool { return m.reclaimed })
		ranges := s.limitRangesOf(j.Namespace)
		var limits []limitViolation
		for i := range pods {
			admitted, violations := admitLimitRanges(pods[i].pod, ranges)
			for _, v := range violations {
				v.replica = strings.ToLower(string(pods[i].rtype))
				limits = append(limits, v)
			}
			pods[i].pod = admitted
		}
		quotas := predictQuota(s.quotasOf(j.Namespace), pods)
		r.reasons = append(r.reasons, quotaReasons(s, j, quotas, r.refused, reclaimed)...)
		r.reasons = append(r.reasons, limitReasons(s, j, limits, r.refused)...)
		r.reasons = append(r.reasons, otherReasons(s, j, r.refused)...)
		out = append(out, r)
	}
	return out
}

// refusalResults are one check's results: a finding per job it explains
// (FAIL, or WARN when every rule it names admits the pods now), or OK.
func refusalResults(refusals []jobRefusal, check, okMessage string) []Result {
	var out []Result
	for _, r := range refusals {
		var findings, fixes []string
		status, seen := StatusWarn, false
		for _, reason := range r.reasons {
			if reason.check != check {
				continue
			}
			findings = append(findings, reason.finding)
			if !slices.Contains(fixes, reason.fix) {
				fixes = append(fixes, reason.fix)
			}
			if reason.status == StatusFail {
				status = StatusFail
			}
			seen = seen || reason.seen
		}
		if len(findings) == 0 {
			continue
		}
		head := fmt.Sprintf("%d of %d pod(s) not created", r.missing, r.job.TotalReplicas())
		if seen {
			head += fmt.Sprintf(" (the apiserver refused %s %s ago)", refusedPodName(r.refused), r.refused.ago)
		}
		out = append(out, Result{
			Check: check, Status: status, Object: jobRef(r.job),
			Finding: head + ": " + strings.Join(findings, "; "),
			Fix:     strings.Join(fixes, "; "),
		})
	}
	if len(out) == 0 {
		return []Result{ok(check, okMessage)}
	}
	return out
}

func refusedPodName(e *refusalEvent) string {
	if e.parsed.pod == "" {
		return "a pod"
	}
	return "pod " + e.parsed.pod
}

// reasonPriorityClassNotFound is the reason of the operator's Created
// condition and event when a job names a PriorityClass that does not exist.
const reasonPriorityClassNotFound = "PriorityClassNotFound"

// Reasons of the operator's events about creating pods: FailedCreatePod
// carries the apiserver's refusal; SuccessfulCreatePod follows a pass
// that created every pod it tried.
const (
	reasonFailedCreatePod     = "FailedCreatePod"
	reasonSuccessfulCreatePod = "SuccessfulCreatePod"
)

// blockedByPriorityClass: the operator holds the job because a
// PriorityClass it names is missing (reported by its own check).
func blockedByPriorityClass(j *kubeflowv1.TFJob) bool {
	c := findCondition(j, kubeflowv1.JobCreated)
	return c != nil && c.Status == corev1.ConditionFalse && c.Reason == reasonPriorityClassNotFound
}

// lastRefusal is the newest FailedCreatePod event of the job, unless a
// pass that created every pod it tried came after it: a refusal older
// than that has been overcome.
func (s *Snapshot) lastRefusal(j *kubeflowv1.TFJob) *refusalEvent {
	var refused, created *corev1.Event
	for i := range s.Events {
		e := &s.Events[i]
		if !aboutJob(e, j) {
			continue
		}
		switch {
		case e.Reason == reasonFailedCreatePod && e.Type == corev1.EventTypeWarning:
			if refused == nil || eventTime(e).After(eventTime(refused)) {
				refused = e
			}
		case e.Reason == reasonSuccessfulCreatePod:
			if created == nil || eventTime(e).After(eventTime(created)) {
				created = e
			}
		}
	}
	if refused == nil || (created != nil && !eventTime(refused).After(eventTime(created))) {
		return nil
	}
	parsed, ok := parseRefusal(refused.Message)
	return &refusalEvent{message: refused.Message, ago: age(s.Now, eventTime(refused)), parsed: parsed, ok: ok}
}

// aboutJob: the event is about this TFJob, not an earlier one of the
// same name.
func aboutJob(e *corev1.Event, j *kubeflowv1.TFJob) bool {
	o := e.InvolvedObject
	return e.Namespace == j.Namespace && o.Kind == "TFJob" && o.Name == j.Name && (o.UID == "" || j.UID == "" || o.UID == j.UID)
}

// eventTime is when an event last happened.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
