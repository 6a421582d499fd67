package kwok

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeSpec describes one simulated node.
type NodeSpec struct {
	// Name is the node's name and kubernetes.io/hostname.
	Name string
	// CPU and Memory are the node's capacity, all of it allocatable.
	CPU    resource.Quantity
	Memory resource.Quantity
	// Pods is how many pods fit; 0 means the kubelet's default of 110.
	Pods int
	// GPUs is the node's count of nvidia.com/gpu; 0 leaves the resource off.
	GPUs int
	// Labels are added to the node's own, and win over them.
	Labels map[string]string
	// SystemCPU and SystemMemory are what the node's own daemons use,
	// added to its pods' use in its metrics; zero for none.
	SystemCPU, SystemMemory resource.Quantity
}

// defaultMaxPods is the kubelet's default --max-pods.
const defaultMaxPods = 110

// NodeObject is the Node to create for spec. kwok manages it because of
// its annotation and makes it Ready (config/node-initialize.yaml). It has
// no taint: every node of the local cluster is simulated, so workloads
// must schedule there without tolerating anything.
func NodeObject(spec NodeSpec) *corev1.Node {
	pods := spec.Pods
	if pods == 0 {
		pods = defaultMaxPods
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    spec.CPU.DeepCopy(),
		corev1.ResourceMemory: spec.Memory.DeepCopy(),
		corev1.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
	}
	nodeType := NodeTypeCPU
	if spec.GPUs > 0 {
		nodeType = NodeTypeGPU
		resources[GPUResource] = *resource.NewQuantity(int64(spec.GPUs), resource.DecimalSI)
	}
	labels := map[string]string{
		corev1.LabelHostname:   spec.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
		NodeTypeLabel:          nodeType,
	}
	maps.Copy(labels, spec.Labels)
	annotations := map[string]string{ManagedNodeAnnotation: ManagedNodeValue}
	if !spec.SystemCPU.IsZero() {
		annotations[SystemCPUAnnotation] = strconv.FormatFloat(spec.SystemCPU.AsApproximateFloat64(), 'f', -1, 64)
	}
	if !spec.SystemMemory.IsZero() {
		annotations[SystemMemoryAnnotation] = strconv.FormatInt(spec.SystemMemory.Value(), 10)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        spec.Name,
			Labels:      labels,
			Annotations: annotations,
		},
		Status: corev1.NodeStatus{
			Capacity:    resources,
			Allocatable: resources.DeepCopy(),
		},
	}
}

// ResourceMetricsPathAnnotation on a Node tells metrics-server (0.7 and
// later) the path of the node's kubelet resource metrics, in place of
// /metrics/resource. Every simulated node's kubelet endpoint is kwok's one
// server, which serves each node's metrics under a path of its own.
const ResourceMetricsPathAnnotation = "metrics.k8s.io/resource-metrics-path"

// ResourceMetricsPath is the path of nodeName's emulated kubelet resource
// metrics on kwok's server (config/metrics-resource.yaml): the value of
// ResourceMetricsPathAnnotation.
func ResourceMetricsPath(nodeName string) string {
	return "/metrics/nodes/" + nodeName + "/metrics/resource"
}
