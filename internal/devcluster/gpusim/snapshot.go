package gpusim

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ResourceGPU is the extended resource the NVIDIA device plugin advertises;
// the local cluster's nodes carry it in status.allocatable.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// Snapshot is the simulated state of every GPU of the cluster at now. A node
// has as many GPUs as its status.allocatable counts nvidia.com/gpu; nodes
// without them have none. GPUs are given to pods as allocate describes and
// read as readingsFor describes. The result is ordered by node name, then
// GPU index, and depends on nothing but its arguments.
func Snapshot(nodes []corev1.Node, pods []corev1.Pod, now time.Time) []GPU {
	podsByNode := map[string][]corev1.Pod{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			podsByNode[p.Spec.NodeName] = append(podsByNode[p.Spec.NodeName], p)
		}
	}

	sorted := append([]corev1.Node(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })

	var gpus []GPU
	for _, node := range sorted {
		count := gpuCount(node)
		if count == 0 {
			continue
		}
		holders := allocate(count, podsByNode[node.Name])
		for i := range count {
			g := GPU{
				Hostname:  node.Name,
				Index:     i,
				UUID:      uuidFor(node.Name, i),
				Device:    deviceFor(i),
				ModelName: ModelName,
			}
			if h := holders[i]; h != nil {
				g.Pod, g.Namespace, g.Container = h.pod.Name, h.pod.Namespace, h.container
			}
			g.setReadings(holders[i], now)
			gpus = append(gpus, g)
		}
	}
	return gpus
}

// gpuCount is the number of GPUs node advertises as allocatable.
func gpuCount(node corev1.Node) int {
	q, ok := node.Status.Allocatable[ResourceGPU]
	if !ok || q.Sign() <= 0 {
		return 0
	}
	return int(q.Value())
}
