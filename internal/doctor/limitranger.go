package doctor

import (
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// What a namespace's LimitRanges do to a pod at creation, as the
// LimitRanger admission plugin (k8s.io/kubernetes
// plugin/pkg/admission/limitranger) does it: the apiserver first defaults
// a missing request to the container's limit, LimitRanger then fills in
// its default requests and limits where a container states none, and
// refuses the pod if a container (or the pod, for Pod items) breaks a
// min, max or maxLimitRequestRatio. A request left above a defaulted
// limit makes the pod invalid.

// admitLimitRanges is the pod as LimitRanger makes it, and every
// constraint of every LimitRange it breaks (the apiserver names only
// those of the first).
func admitLimitRanges(p *corev1.Pod, ranges []corev1.LimitRange) (*corev1.Pod, []limitViolation) {
	pod := p.DeepCopy()
	for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range containers {
			defaultRequestsToLimits(&containers[i].Resources)
		}
	}
	defaulted := make([]corev1.LimitRange, len(ranges))
	for i := range ranges {
		defaulted[i] = *withItemDefaults(&ranges[i])
	}
	// limitFrom[container][resource] is the LimitRange whose default
	// limit the container got.
	limitFrom := map[string]map[corev1.ResourceName]string{}
	for i := range defaulted {
		applyDefaults(pod, &defaulted[i], limitFrom)
	}
	var out []limitViolation
	for i := range defaulted {
		out = append(out, limitRangeViolations(pod, &defaulted[i])...)
	}
	for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range containers {
			for name, from := range limitFrom[c.Name] {
				req, lim := c.Resources.Requests[name], c.Resources.Limits[name]
				if _, ok := c.Resources.Requests[name]; ok && req.Cmp(lim) > 0 {
					out = append(out, limitViolation{limitRange: from, rule: limitDefault, limitType: corev1.LimitTypeContainer,
						resource: name, enforced: lim, side: "request", observed: req.String(), container: c.Name})
				}
			}
		}
	}
	return pod, out
}

// defaultRequestsToLimits: a limit without a request is also the
// request, as the apiserver defaults it before admission.
func defaultRequestsToLimits(r *corev1.ResourceRequirements) {
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			r.Requests[name] = q.DeepCopy()
		}
	}
}

// withItemDefaults is a LimitRange as the apiserver stores it: a
// Container item's default limit is its max where unset, its default
// request its default limit, else its min.
func withItemDefaults(lr *corev1.LimitRange) *corev1.LimitRange {
	out := lr.DeepCopy()
	for i := range out.Spec.Limits {
		item := &out.Spec.Limits[i]
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		if item.Default == nil {
			item.Default = corev1.ResourceList{}
		}
		if item.DefaultRequest == nil {
			item.DefaultRequest = corev1.ResourceList{}
		}
		for _, from := range []struct{ src, dst corev1.ResourceList }{{item.Max, item.Default}, {item.Default, item.DefaultRequest}, {item.Min, item.DefaultRequest}} {
			for name, q := range from.src {
				if _, ok := from.dst[name]; !ok {
					from.dst[name] = q.DeepCopy()
				}
			}
		}
	}
	return out
}

// applyDefaults fills a LimitRange's default requests and limits into the
// containers that state none.
func applyDefaults(pod *corev1.Pod, lr *corev1.LimitRange, limitFrom map[string]map[corev1.ResourceName]string) {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, item := range lr.Spec.Limits {
		if item.Type == corev1.LimitTypeContainer {
			for name, q := range item.DefaultRequest {
				requests[name] = q
			}
			for name, q := range item.Default {
				limits[name] = q
			}
		}
	}
	for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range containers {
			r := &containers[i].Resources
			for name, q := range limits {
				if _, ok := r.Limits[name]; !ok {
					if r.Limits == nil {
						r.Limits = corev1.ResourceList{}
					}
					r.Limits[name] = q.DeepCopy()
					if limitFrom[containers[i].Name] == nil {
						limitFrom[containers[i].Name] = map[corev1.ResourceName]string{}
					}
					limitFrom[containers[i].Name][name] = lr.Name
				}
			}
			for name, q := range requests {
				if _, ok := r.Requests[name]; !ok {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
}

// limitRangeViolations checks each container, and the pod as a whole,
// against the LimitRange's Container and Pod items.
func limitRangeViolations(pod *corev1.Pod, lr *corev1.LimitRange) []limitViolation {
	var out []limitViolation
	check := func(item corev1.LimitRangeItem, container string, requests, limits corev1.ResourceList) {
		for _, name := range sortedNames(item.Min) {
			out = appendViolation(out, minConstraint(name, item.Min[name], requests, limits), lr, item, container)
		}
		for _, name := range sortedNames(item.Max) {
			out = appendViolation(out, maxConstraint(name, item.Max[name], requests, limits), lr, item, container)
		}
		for _, name := range sortedNames(item.MaxLimitRequestRatio) {
			out = appendViolation(out, ratioConstraint(name, item.MaxLimitRequestRatio[name], requests, limits), lr, item, container)
		}
	}
	for _, item := range lr.Spec.Limits {
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for _, c := range containers {
					check(item, c.Name, c.Resources.Requests, c.Resources.Limits)
				}
			}
		case corev1.LimitTypePod:
			check(item, "", resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}), resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{}))
		}
	}
	return out
}

func appendViolation(out []limitViolation, v *limitViolation, lr *corev1.LimitRange, item corev1.LimitRangeItem, container string) []limitViolation {
	if v == nil {
		return out
	}
	v.limitRange, v.limitType, v.container = lr.Name, item.Type, container
	return append(out, *v)
}

func minConstraint(name corev1.ResourceName, least resource.Quantity, requests, limits corev1.ResourceList) *limitViolation {
	v := &limitViolation{rule: limitMin, resource: name, enforced: least}
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	switch {
	case !hasReq:
		v.side, v.unspecified = "request", true
	case req.Cmp(least) < 0:
		v.side, v.observed = "request", req.String()
	case hasLim && lim.Cmp(least) < 0:
		v.side, v.observed = "limit", lim.String()
	default:
		return nil
	}
	return v
}

func maxConstraint(name corev1.ResourceName, most resource.Quantity, requests, limits corev1.ResourceList) *limitViolation {
	v := &limitViolation{rule: limitMax, resource: name, enforced: most}
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	switch {
	case !hasLim:
		v.side, v.unspecified = "limit", true
	case lim.Cmp(most) > 0:
		v.side, v.observed = "limit", lim.String()
	case hasReq && req.Cmp(most) > 0:
		v.side, v.observed = "request", req.String()
	default:
		return nil
	}
	return v
}

func ratioConstraint(name corev1.ResourceName, ratio resource.Quantity, requests, limits corev1.ResourceList) *limitViolation {
	v := &limitViolation{rule: limitRatio, resource: name, enforced: ratio}
	req, lim := requests[name], limits[name]
	switch {
	case req.IsZero():
		v.side, v.unspecified = "request", true
	case lim.IsZero():
		v.side, v.unspecified = "limit", true
	default:
		observed := float64(lim.MilliValue()) / float64(req.MilliValue())
		if observed*1000 <= float64(ratio.MilliValue()) {
			return nil
		}
		v.side, v.observed = "ratio", strconv.FormatFloat(math.Round(observed*1000)/1000, 'f', -1, 64)
	}
	return v
}
