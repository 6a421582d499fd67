package doctor

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// checkLimitRange finds the active jobs whose pods are missing because a
// LimitRange of their namespace refuses them: a container asking for more
// than its max, less than its min, or a limit too far above its request.
// The apiserver refuses such a pod at creation, so it never appears.
func checkLimitRange(s *Snapshot, jobs []*kubeflowv1.TFJob) []Result {
	return checkRefused(s, jobs, refusal{
		check: CheckLimitRange, eventText: "LimitRange",
		reasons: func(j *kubeflowv1.TFJob) []string {
			var violations []string
			for i := range s.LimitRanges {
				if lr := &s.LimitRanges[i]; lr.Namespace == j.Namespace {
					violations = append(violations, limitRangeViolations(lr, j)...)
				}
			}
			return violations
		},
		fix: func(j *kubeflowv1.TFJob) string {
			return "change the job's container resources to fit the LimitRange (kubectl describe limitrange -n " + j.Namespace + "), or ask the namespace's owner to widen it"
		},
		okMessage: "no TFJob pod is refused by a LimitRange",
	})
}

// limitRangeViolations checks each container of each replica template
// against the Container items of the LimitRange, after the LimitRange's
// defaults are applied as the apiserver applies them.
func limitRangeViolations(lr *corev1.LimitRange, j *kubeflowv1.TFJob) []string {
	var out []string
	for _, rtype := range replicaTypes(j) {
		spec := j.Spec.TFReplicaSpecs[rtype]
		if spec == nil {
			continue
		}
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			for i := range spec.Template.Spec.Containers {
				c := &spec.Template.Spec.Containers[i]
				for _, v := range containerViolations(item, c) {
					out = append(out, fmt.Sprintf("LimitRange %s: %s container %s %s", lr.Name, strings.ToLower(string(rtype)), c.Name, v))
				}
			}
		}
	}
	return out
}

// containerViolations compares one container with one LimitRange item.
func containerViolations(item corev1.LimitRangeItem, c *corev1.Container) []string {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for name, q := range item.Default {
		limits[name] = q
	}
	for name, q := range c.Resources.Limits {
		limits[name] = q
	}
	for name, q := range item.DefaultRequest {
		requests[name] = q
	}
	for name, q := range limits {
		if _, set := c.Resources.Requests[name]; !set {
			if _, defaulted := item.DefaultRequest[name]; !defaulted {
				requests[name] = q
			}
		}
	}
	for name, q := range c.Resources.Requests {
		requests[name] = q
	}
	var out []string
	for _, name := range sortedNames(item.Max) {
		most := item.Max[name]
		if l, ok := limits[name]; ok && l.Cmp(most) > 0 {
			out = append(out, fmt.Sprintf("has a %s limit of %s, above the maximum %s", name, show(l), show(most)))
		} else if !ok {
			out = append(out, fmt.Sprintf("sets no %s limit, which the maximum %s requires", name, show(most)))
		}
	}
	for _, name := range sortedNames(item.Min) {
		least := item.Min[name]
		if r, ok := requests[name]; ok && r.Cmp(least) < 0 {
			out = append(out, fmt.Sprintf("requests %s %s, below the minimum %s", show(r), name, show(least)))
		}
	}
	for _, name := range sortedNames(item.MaxLimitRequestRatio) {
		ratio := item.MaxLimitRequestRatio[name]
		l, lok := limits[name]
		r, rok := requests[name]
		if lok && rok && !r.IsZero() && float64(l.MilliValue())/float64(r.MilliValue()) > ratio.AsApproximateFloat64() {
			out = append(out, fmt.Sprintf("has a %s limit %s over request %s, above the ratio %s", name, show(l), show(r), show(ratio)))
		}
	}
	for _, name := range sortedNames(requests) {
		r := requests[name]
		if l, ok := limits[name]; ok && r.Cmp(l) > 0 {
			out = append(out, fmt.Sprintf("requests %s %s, more than its limit %s (a LimitRange default)", show(r), name, show(l)))
		}
	}
	return out
}
