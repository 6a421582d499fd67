package colocation

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ContainerRules are what a namespace's LimitRanges ask of each
// container's cpu and memory that shapes a reclaimed pod, combined as the
// LimitRanger admission plugin applies them: every minimum and
// limit-to-request ratio must hold, and a missing limit gets the first
// default. A maximum the template exceeds is the apiserver's to refuse.
type ContainerRules struct {
	Min, Default, MaxRatio corev1.ResourceList
}

// ContainerRulesOf combines the Container items of ranges, in the order of
// their names (the LimitRanger's is its cache's), so that every pod of a
// job gets the same default.
func ContainerRulesOf(ranges []corev1.LimitRange) ContainerRules {
	rules := ContainerRules{Min: corev1.ResourceList{}, Default: corev1.ResourceList{}, MaxRatio: corev1.ResourceList{}}
	ranges = slices.Clone(ranges)
	slices.SortFunc(ranges, func(a, b corev1.LimitRange) int { return strings.Compare(a.Name, b.Name) })
	for _, lr := range ranges {
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				keep(rules.Min, name, item.Min, 1)
				keep(rules.MaxRatio, name, item.MaxLimitRequestRatio, -1)
				if _, set := rules.Default[name]; !set {
					if q, ok := item.Default[name]; ok {
						rules.Default[name] = q
					}
				}
			}
		}
	}
	return rules
}

// keep sets list[name] to from[name] where that is the first value or
// compares to the kept one as sign (1: larger wins, -1: smaller wins).
func keep(list corev1.ResourceList, name corev1.ResourceName, from corev1.ResourceList, sign int) {
	q, ok := from[name]
	if !ok {
		return
	}
	if old, set := list[name]; !set || q.Cmp(old) == sign {
		list[name] = q
	}
}

// reclaimedCPUAndMemory is what a container on reclaimed capacity holds of
// cpu and memory, given what its template asked (r) and the namespace's
// rules:
//   - a request of 0, so that the scheduler counts only the batch
//     resources and a ResourceQuota on requests.cpu/requests.memory finds
//     the resource specified; raised only where a LimitRange's minimum or
//     limit-to-request ratio demands it;
//   - the template's limit, which the kubelet enforces; where there is
//     none but a LimitRange would default one, at least what the template
//     asked, so that the default never caps training below its request.
func reclaimedCPUAndMemory(r corev1.ResourceRequirements, rules ContainerRules) corev1.ResourceRequirements {
	out := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		limit, hasLimit := r.Limits[name]
		if def, ok := rules.Default[name]; !hasLimit && ok {
			limit, hasLimit = def, true
			if asked, ok := requestOrLimit(r, name); ok && asked.Cmp(limit) > 0 {
				limit = asked
			}
		}
		if hasLimit {
			out.Limits[name] = limit
		}
		request := zero(name)
		if min, ok := rules.Min[name]; ok && min.Cmp(request) > 0 {
			request = min
		}
		if ratio, ok := rules.MaxRatio[name]; ok && hasLimit {
			if least := divideUp(limit, ratio, name); least.Cmp(request) > 0 {
				request = least
			}
		}
		out.Requests[name] = request
	}
	return out
}

func zero(name corev1.ResourceName) resource.Quantity {
	if name == corev1.ResourceCPU {
		return *resource.NewMilliQuantity(0, resource.DecimalSI)
	}
	return *resource.NewQuantity(0, resource.BinarySI)
}

// divideUp is limit / ratio rounded up to the resource's unit: the least
// request a LimitRange's maxLimitRequestRatio accepts.
func divideUp(limit, ratio resource.Quantity, name corev1.ResourceName) resource.Quantity {
	r := ratio.MilliValue()
	if r <= 0 {
		return zero(name)
	}
	if name == corev1.ResourceCPU {
		m := limit.MilliValue()
		return *resource.NewMilliQuantity((m*1000+r-1)/r, resource.DecimalSI)
	}
	b := limit.Value()
	return *resource.NewQuantity((b*1000+r-1)/r, resource.BinarySI)
}
