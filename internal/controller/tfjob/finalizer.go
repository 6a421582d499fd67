package tfjob

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// trackingFinalizer keeps a replica pod in the apiserver until the operator
// has recorded how it ended. Without it a pod that is preempted, evicted or
// deleted could vanish between two passes, and its disruption or restart
// would go uncounted (or, after an operator crash, be counted twice).
const trackingFinalizer = "backfill.dev/replica-tracking"

func hasTrackingFinalizer(pod *corev1.Pod) bool {
	return slices.Contains(pod.Finalizers, trackingFinalizer)
}

func sortedPods(pods map[string]*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, name := range sortedNames(pods) {
		out = append(out, pods[name])
	}
	return out
}

func sortedNames[T any](m map[string]T) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
