package doctor

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
)

// What a pod counts against a ResourceQuota, and what a quota demands of
// it, as the apiserver's quota admission and its pod evaluator
// (k8s.io/kubernetes pkg/quota/v1/evaluator/core) reckon them.

// specifiedByEveryContainer are the quota resources each container must
// state when a quota counts them: the quota evaluator's old rule for cpu
// and memory (and for them only).
var specifiedByEveryContainer = sets.New[corev1.ResourceName](
	corev1.ResourceCPU, corev1.ResourceMemory,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
)

// quotaCharge is what a new pod adds to each quota resource: pods and
// count/pods 1, cpu, memory and ephemeral-storage by their requests
// (plain and requests.*) and limits (limits.*), hugepages and extended
// resources (nvidia.com/gpu, backfill.dev/batch-cpu) by their requests
// (requests.*). A request of 0 is charged too: it counts as stated.
func quotaCharge(pod *corev1.Pod) corev1.ResourceList {
	out := computeUsage(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}),
		resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{}))
	out["count/pods"] = *resource.NewQuantity(1, resource.DecimalSI)
	return out
}

// computeUsage is the quota evaluator's usage of some requests and
// limits, with pods 1.
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := requests[name]; ok {
			out[name] = q
			out["requests."+name] = q
		}
		if q, ok := limits[name]; ok {
			out["limits."+name] = q
		}
	}
	for name, q := range requests {
		switch {
		case strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
			out[name] = q
			out["requests."+name] = q
		case isExtendedResource(name):
			// Only requests.X quotas count extended resources.
			out["requests."+name] = q
		}
	}
	return out
}

// isExtendedResource: a resource with a domain outside kubernetes.io,
// such as nvidia.com/gpu or backfill.dev/batch-cpu.
func isExtendedResource(name corev1.ResourceName) bool {
	n := string(name)
	return strings.Contains(n, "/") && !strings.Contains(n, "kubernetes.io/") && !strings.HasPrefix(n, corev1.DefaultResourceRequestsPrefix)
}

// missingFromContainers is the quota evaluator's "must specify": of the
// cpu and memory resources the quota counts, those some container (or
// init container) does not state, with the containers. A request of 0
// states it.
func missingFromContainers(q *corev1.ResourceQuota, pod *corev1.Pod) map[corev1.ResourceName][]string {
	if resourcehelper.IsPodLevelResourcesSet(pod) {
		return nil // pod-level resources lift the rule
	}
	required := sets.New[corev1.ResourceName]()
	for name := range q.Status.Hard {
		if specifiedByEveryContainer.Has(name) {
			required.Insert(name)
		}
	}
	missing := map[corev1.ResourceName][]string{}
	for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range containers {
			c := &containers[i]
			stated := computeUsage(c.Resources.Requests, c.Resources.Limits)
			for name := range required {
				if _, ok := stated[name]; !ok && !slices.Contains(missing[name], c.Name) {
					missing[name] = append(missing[name], c.Name)
				}
			}
		}
	}
	for name := range missing {
		slices.Sort(missing[name])
	}
	return missing
}

// quotaApplies reports whether a quota judges the pod: all its scopes
// match it. A scope doctor does not know never matches, so that an
// unknown quota is left out rather than blamed.
func quotaApplies(q *corev1.ResourceQuota, pod *corev1.Pod) bool {
	for _, scope := range q.Spec.Scopes {
		if !scopeMatches(corev1.ScopedResourceSelectorRequirement{ScopeName: scope, Operator: corev1.ScopeSelectorOpExists}, pod) {
			return false
		}
	}
	if q.Spec.ScopeSelector != nil {
		for _, req := range q.Spec.ScopeSelector.MatchExpressions {
			if !scopeMatches(req, pod) {
				return false
			}
		}
	}
	return true
}

func scopeMatches(req corev1.ScopedResourceSelectorRequirement, pod *corev1.Pod) bool {
	switch req.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return terminating(pod)
	case corev1.ResourceQuotaScopeNotTerminating:
		return !terminating(pod)
	case corev1.ResourceQuotaScopeBestEffort:
		return bestEffort(pod)
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !bestEffort(pod)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(pod)
	case corev1.ResourceQuotaScopePriorityClass:
		if req.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != ""
		}
		// As the evaluator does: a label selector over one label,
		// PriorityClass=<the pod's class>.
		op, known := scopeOperators[req.Operator]
		r, err := labels.NewRequirement(string(corev1.ResourceQuotaScopePriorityClass), op, req.Values)
		if !known || err != nil {
			return false
		}
		return labels.NewSelector().Add(*r).Matches(labels.Set{string(corev1.ResourceQuotaScopePriorityClass): pod.Spec.PriorityClassName})
	}
	return false
}

var scopeOperators = map[corev1.ScopeSelectorOperator]selection.Operator{
	corev1.ScopeSelectorOpIn: selection.In, corev1.ScopeSelectorOpNotIn: selection.NotIn,
	corev1.ScopeSelectorOpExists: selection.Exists, corev1.ScopeSelectorOpDoesNotExist: selection.DoesNotExist,
}

func terminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// bestEffort: no container asks for or is limited to any cpu or memory.
// A reclaimed pod is BestEffort when its template set no limits: its
// cpu and memory requests are 0, the batch resources do not count.
func bestEffort(pod *corev1.Pod) bool {
	for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range containers {
			for _, list := range []corev1.ResourceList{containers[i].Resources.Requests, containers[i].Resources.Limits} {
				for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					if q, ok := list[name]; ok && q.Sign() > 0 {
						return false
					}
				}
			}
		}
	}
	if r := pod.Spec.Resources; r != nil {
		return !hasCPUOrMemory(r.Requests) && !hasCPUOrMemory(r.Limits)
	}
	return true
}

func hasCPUOrMemory(l corev1.ResourceList) bool {
	cpu, memory := l[corev1.ResourceCPU], l[corev1.ResourceMemory]
	return cpu.Sign() > 0 || memory.Sign() > 0
}

func crossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	return slices.ContainsFunc(terms, func(t corev1.PodAffinityTerm) bool { return len(t.Namespaces) > 0 || t.NamespaceSelector != nil })
}
