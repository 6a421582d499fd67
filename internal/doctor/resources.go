package doctor

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// GPUResource is the extended resource the NVIDIA device plugin offers.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// podRequests is what the scheduler counts for a pod: its containers'
// requests, or the largest init container's if that is more, plus the pod
// overhead.
func podRequests(p *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
}

func addList(sum, add corev1.ResourceList) {
	for name, q := range add {
		cur := sum[name]
		cur.Add(q)
		sum[name] = cur
	}
}

// nodeFree is a node's allocatable less the requests of the pods bound to
// it that still hold their resources.
type nodeFree struct {
	node        *corev1.Node
	allocatable corev1.ResourceList
	free        corev1.ResourceList
}

// freeOnNodes computes nodeFree for every schedulable node.
func freeOnNodes(nodes []corev1.Node, pods []corev1.Pod) []nodeFree {
	used := map[string]corev1.ResourceList{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if used[p.Spec.NodeName] == nil {
			used[p.Spec.NodeName] = corev1.ResourceList{}
		}
		addList(used[p.Spec.NodeName], podRequests(p))
	}
	var out []nodeFree
	for i := range nodes {
		n := &nodes[i]
		if n.Spec.Unschedulable {
			continue
		}
		free := corev1.ResourceList{}
		for name, q := range n.Status.Allocatable {
			f := q.DeepCopy()
			if u, ok := used[n.Name][name]; ok {
				f.Sub(u)
			}
			free[name] = f
		}
		out = append(out, nodeFree{node: n, allocatable: n.Status.Allocatable, free: free})
	}
	return out
}

// mostFree is the largest free and the largest allocatable amount of a
// resource on any one node; zero when no node has it.
func mostFree(nodes []nodeFree, name corev1.ResourceName) (free, allocatable resource.Quantity) {
	for _, n := range nodes {
		if q, ok := n.free[name]; ok && q.Cmp(free) > 0 {
			free = q.DeepCopy()
		}
		if q, ok := n.allocatable[name]; ok && q.Cmp(allocatable) > 0 {
			allocatable = q.DeepCopy()
		}
	}
	return free, allocatable
}

// show prints a quantity as people write it: 4, 500m, 16Gi.
func show(q resource.Quantity) string {
	if q.Sign() < 0 {
		return "0"
	}
	return q.String()
}

// sortedNames are the resource names of a list in order, so that findings
// read the same every time.
func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(l))
}
