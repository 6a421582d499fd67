package nodeagent

import (
	corev1 "k8s.io/api/core/v1"
)

// Resize is where an in-place resize of a pod's resources stands, as the
// pod's status tells.
//
// The agent needs to know because of what the kubelet writes on a resize:
// the pod cgroup's cpu.shares (cpu.weight on cgroup v2), and its CPU quota,
// then the runtime each container's. The kernel refuses (EINVAL) a
// cpu.shares or cpu.weight write to a cgroup in the idle class, and on
// cgroup v1 a container's quota above its pod's: an agent that kept a
// resizing pod idle, or capped below its new limits, would make the
// kubelet's resize fail, over and over.
type Resize int

const (
	// ResizeNone is a pod that runs with the resources its spec asks for.
	ResizeNone Resize = iota
	// ResizeAsked is a pod whose spec asks for resources the kubelet has
	// not applied yet: it has not seen the change, or has put it off
	// (PodResizePending). It may apply them at any moment.
	ResizeAsked
	// ResizeApplying is a pod whose new resources the kubelet is applying,
	// or failed to apply and will try again (PodResizeInProgress).
	ResizeApplying
)

// resizeOf is where pod's resize stands.
func resizeOf(pod *corev1.Pod) Resize {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodResizeInProgress && c.Status == corev1.ConditionTrue {
			return ResizeApplying
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodResizePending && c.Status == corev1.ConditionTrue {
			return ResizeAsked
		}
	}
	if !appliedAsAsked(pod) {
		return ResizeAsked
	}
	return ResizeNone
}

// appliedAsAsked reports whether the resources the kubelet reports applied
// (status resources, where it reports them) are those the spec asks for.
func appliedAsAsked(pod *corev1.Pod) bool {
	if pod.Spec.Resources != nil && pod.Status.Resources != nil && !sameResources(*pod.Spec.Resources, *pod.Status.Resources) {
		return false
	}
	applied := map[string]*corev1.ResourceRequirements{}
	for _, s := range pod.Status.ContainerStatuses {
		applied[s.Name] = s.Resources
	}
	for _, c := range pod.Spec.Containers {
		if r := applied[c.Name]; r != nil && !sameResources(c.Resources, *r) {
			return false
		}
	}
	return true
}

// sameResources compares the CPU and memory a resize may change.
func sameResources(a, b corev1.ResourceRequirements) bool {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if !sameQuantity(a.Requests, b.Requests, name) || !sameQuantity(a.Limits, b.Limits, name) {
			return false
		}
	}
	return true
}

// sameQuantity compares one resource of two lists, where none is zero.
func sameQuantity(a, b corev1.ResourceList, name corev1.ResourceName) bool {
	qa, qb := a[name], b[name]
	return qa.Cmp(qb) == 0
}
