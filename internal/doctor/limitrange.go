package doctor

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// checkLimitRange finds the active jobs whose pods a LimitRange of their
// namespace refuses: a container (or pod) above a max, below a min, with
// a limit too far above its request, or a default limit below its
// request. The apiserver's refusal names no LimitRange; doctor finds the
// one with the rule.
func checkLimitRange(refusals []jobRefusal) []Result {
	return refusalResults(refusals, CheckLimitRange, "no TFJob pod is refused by a LimitRange")
}

// limitReasons are the LimitRange rules that refuse a job's pods: those
// the namespace's LimitRanges predict for the pods the operator sends
// (FAIL), and those the apiserver named that no longer hold (WARN).
func limitReasons(s *Snapshot, j *kubeflowv1.TFJob, predicted []limitViolation, ev *refusalEvent) []refusalReason {
	var out []refusalReason
	confirmed := make([]bool, len(predicted))
	if ev != nil {
		ranges := s.limitRangesOf(j.Namespace)
		for _, e := range eventLimits(ev, ranges) {
			if i := slices.IndexFunc(predicted, e.sameRule); i >= 0 {
				confirmed[i] = true
				continue
			}
			e.replica, e.container = podReplica(j, ev.parsed.pod), resolveContainer(j, ev.parsed.pod, e.container)
			finding, _ := limitReason(e, j)
			if e.limitRange == "" {
				finding += "; no LimitRange of the namespace has that rule now"
			} else {
				finding += fmt.Sprintf("; LimitRange %s admits the pods now", e.limitRange)
			}
			out = append(out, refusalReason{check: CheckLimitRange, status: StatusWarn, finding: finding, fix: retryFix, seen: true})
		}
	}
	for i, p := range predicted {
		finding, fix := limitReason(p, j)
		out = append(out, refusalReason{check: CheckLimitRange, status: StatusFail, finding: finding, fix: fix, seen: confirmed[i]})
	}
	return out
}

// eventLimits are the LimitRange rules of the apiserver's refusal, each
// with the LimitRange that has it now. A request over a limit that no
// LimitRange defaults is the template's own error, left to pod-create.
func eventLimits(ev *refusalEvent, ranges []corev1.LimitRange) []limitViolation {
	var out []limitViolation
	for _, v := range ev.parsed.limits {
		v.limitRange = limitRangeWith(ranges, v)
		if v.rule == limitDefault && v.limitRange == "" {
			continue
		}
		out = append(out, v)
	}
	return out
}

// sameRule: two violations name the same constraint of the same
// LimitRange (an unknown one matches any).
func (v limitViolation) sameRule(o limitViolation) bool {
	return (v.limitRange == o.limitRange || v.limitRange == "" || o.limitRange == "") &&
		v.rule == o.rule && v.limitType == o.limitType && v.resource == o.resource && v.side == o.side && v.enforced.Cmp(o.enforced) == 0
}

// limitRangeWith is the first LimitRange with the violation's rule at its
// value, as the apiserver stores it (with its item defaults), or "".
func limitRangeWith(ranges []corev1.LimitRange, v limitViolation) string {
	for i := range ranges {
		lr := withItemDefaults(&ranges[i])
		for _, item := range lr.Spec.Limits {
			if item.Type != v.limitType {
				continue
			}
			list := map[limitRule]corev1.ResourceList{limitMin: item.Min, limitMax: item.Max, limitRatio: item.MaxLimitRequestRatio, limitDefault: item.Default}[v.rule]
			if q, ok := list[v.resource]; ok && q.Cmp(v.enforced) == 0 {
				return lr.Name
			}
		}
	}
	return ""
}

// podReplica is the replica type of a pod of the job by its name,
// <job>-<type>-<index>, in lower case; "" when it is not one.
func podReplica(j *kubeflowv1.TFJob, pod string) string {
	rest, ok := strings.CutPrefix(pod, j.Name+"-")
	i := strings.LastIndexByte(rest, '-')
	if !ok || i < 0 {
		return ""
	}
	if _, err := strconv.Atoi(rest[i+1:]); err != nil {
		return ""
	}
	for _, rtype := range replicaTypes(j) {
		if strings.ToLower(string(rtype)) == rest[:i] {
			return rest[:i]
		}
	}
	return ""
}

var containerPath = regexp.MustCompile(`^spec\.(containers|initContainers)\[(\d+)\]$`)

// resolveContainer names a container a field path points at
// ("spec.containers[0]"), from the template of the pod's replica type.
func resolveContainer(j *kubeflowv1.TFJob, pod, container string) string {
	m := containerPath.FindStringSubmatch(container)
	if m == nil {
		return container
	}
	i, _ := strconv.Atoi(m[2])
	for _, rtype := range replicaTypes(j) {
		if strings.ToLower(string(rtype)) != podReplica(j, pod) {
			continue
		}
		list := j.Spec.TFReplicaSpecs[rtype].Template.Spec.Containers
		if m[1] == "initContainers" {
			list = j.Spec.TFReplicaSpecs[rtype].Template.Spec.InitContainers
		}
		if i < len(list) {
			return list[i].Name
		}
	}
	return container
}

// limitReason says what a LimitRange violation means, and its fix.
func limitReason(v limitViolation, j *kubeflowv1.TFJob) (finding, fix string) {
	who := limitWho(v)
	lr := "LimitRange " + v.limitRange
	if v.limitRange == "" {
		lr = "a LimitRange"
	}
	edit := fmt.Sprintf("in the job's template (kubectl edit tfjob %s -n %s)", j.Name, j.Namespace)
	widen := fmt.Sprintf("ask the namespace's owner to %s of %s (kubectl describe limitrange -n %s)", widenWords(v), lr, j.Namespace)
	res := v.resource
	switch v.rule {
	case limitDefault:
		return fmt.Sprintf("%s: %s gets the default %s limit %s, below its request of %s", lr, who, res, show(v.enforced), v.observed),
			fmt.Sprintf("set resources.limits.%s of %s, at least its request, %s, or %s", res, who, edit, widen)
	case limitRatio:
		finding = fmt.Sprintf("%s: the %s limit per %s may be at most %s times the request, but %s", lr, res, v.limitType, show(v.enforced), who)
		if v.unspecified {
			finding += fmt.Sprintf(" has no %s %s (or 0)", res, v.side)
		} else {
			finding += fmt.Sprintf("'s is %s times", v.observed)
		}
		return finding, fmt.Sprintf("bring the %s limit of %s within %s times its request (raise resources.requests.%s or lower resources.limits.%s) %s, or %s",
			res, who, show(v.enforced), res, res, edit, widen)
	}
	bound, most := "minimum", "at least"
	if v.rule == limitMax {
		bound, most = "maximum", "at most"
	}
	finding = fmt.Sprintf("%s: the %s %s per %s is %s, but %s", lr, bound, res, v.limitType, show(v.enforced), who)
	if v.unspecified {
		finding += fmt.Sprintf(" states no %s %s", res, v.side)
	} else {
		finding += fmt.Sprintf(" has a %s %s of %s", res, v.side, v.observed)
	}
	field := "resources." + map[string]string{"request": "requests", "limit": "limits"}[v.side] + "." + string(res)
	return finding, fmt.Sprintf("set %s of %s to %s %s %s, or %s", field, who, most, show(v.enforced), edit, widen)
}

// limitWho names where a violation is: "worker container tensorflow",
// "the worker pod", or "a container of pod j-worker-0".
func limitWho(v limitViolation) string {
	replica := v.replica
	if replica == "" {
		replica = "a"
	}
	switch {
	case v.limitType == corev1.LimitTypePod:
		return "the " + replica + " pod (all its containers)"
	case v.container != "":
		return replica + " container " + v.container
	}
	return "a container of the " + replica + " pod"
}

func widenWords(v limitViolation) string {
	switch v.rule {
	case limitMin:
		return "lower the min"
	case limitMax:
		return "raise the max"
	case limitRatio:
		return "raise the maxLimitRequestRatio"
	}
	return "raise the default limit"
}
