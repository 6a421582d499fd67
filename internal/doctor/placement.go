package doctor

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// allowedNodes are the nodes a pod's constraints let it run on: its node
// selector and required node affinity match, and it tolerates every
// NoSchedule and NoExecute taint. What is free on the others is no help
// to it: a pod kept off the GPU nodes does not fit in their room.
func allowedNodes(nodes []nodeFree, pod *corev1.Pod) []nodeFree {
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	var out []nodeFree
	for _, n := range nodes {
		if match, err := affinity.Match(n.node); err != nil || !match {
			continue
		}
		if untoleratedTaint(n.node.Spec.Taints, pod.Spec.Tolerations) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// untoleratedTaint reports whether a taint that keeps pods off a node
// (NoSchedule, NoExecute) is tolerated by none of tolerations.
func untoleratedTaint(taints []corev1.Taint, tolerations []corev1.Toleration) bool {
	for _, taint := range taints {
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tolerated := false
		for _, t := range tolerations {
			if tolerates(t, taint) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return true
		}
	}
	return false
}

// tolerates is the scheduler's matching of a toleration to a taint: the
// same effect (or any), the same key (or any, with Exists), and with
// Equal the same value.
func tolerates(t corev1.Toleration, taint corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return t.Key != "" && t.Value == taint.Value
	}
	return false
}
