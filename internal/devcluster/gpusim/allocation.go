package gpusim

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// holder is the pod container a GPU is allocated to.
type holder struct {
	pod       *corev1.Pod
	container string
}

// allocate hands out a node's count GPUs to the pods bound to it, as the
// device plugin would, and deterministically: pods in order of creation (name
// breaks ties), each container's request taking the lowest free indexes. Only
// pods that hold GPUs on a real node count (see holdsGPUs). A container whose
// request no longer fits gets none, as the device plugin refuses a partial
// allocation; the scheduler keeps this from happening in a sane cluster. The
// result has count entries, nil for a free GPU.
func allocate(count int, pods []corev1.Pod) []*holder {
	candidates := make([]*corev1.Pod, 0, len(pods))
	for i := range pods {
		if holdsGPUs(&pods[i]) {
			candidates = append(candidates, &pods[i])
		}
	}
	sort.Slice(candidates, func(i, j int) bool {
		a, b := candidates[i], candidates[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})

	holders := make([]*holder, count)
	next := 0 // GPUs are handed out in index order, so the free ones are next..count-1
	for _, pod := range candidates {
		for _, c := range pod.Spec.Containers {
			want := gpuRequest(c)
			if want == 0 || next+want > count {
				continue
			}
			h := &holder{pod: pod, container: c.Name}
			for i := next; i < next+want; i++ {
				holders[i] = h
			}
			next += want
		}
	}
	return holders
}

// holdsGPUs reports whether pod holds the GPUs it requests: it is running and
// not being deleted. A terminating pod's GPUs count as released at once, so
// that a preempted training pod frees its GPUs on the dashboards as soon as
// its deletion starts.
func holdsGPUs(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil
}

// gpuRequest is the number of GPUs container c asks for. Extended resources
// cannot be overcommitted, so a request equals the limit; the apiserver
// copies a lone limit into the requests, but a pod built in a test may carry
// only the limit.
func gpuRequest(c corev1.Container) int {
	q, ok := c.Resources.Requests[ResourceGPU]
	if !ok {
		q, ok = c.Resources.Limits[ResourceGPU]
	}
	if !ok || q.Sign() <= 0 {
		return 0
	}
	return int(q.Value())
}
