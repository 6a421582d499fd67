package clusterview

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/intern"
)

// Resource is a resource the summaries count, with the value of the
// metrics' resource label.
type Resource struct {
	Name  corev1.ResourceName
	Label string
	// Of is the resource's amount in r, in the metrics' unit: cores for
	// cpu, bytes for memory, devices for GPUs.
	Of func(r colocation.Resources) float64
}

// ResourceGPU is the extended resource of NVIDIA's device plugin.
const ResourceGPU = corev1.ResourceName("nvidia.com/gpu")

// Resources are the resources the summaries count, in the metrics'
// order.
var Resources = []Resource{
	{Name: corev1.ResourceCPU, Label: "cpu", Of: func(r colocation.Resources) float64 { return float64(r.MilliCPU) / 1000 }},
	{Name: corev1.ResourceMemory, Label: "memory", Of: func(r colocation.Resources) float64 { return float64(r.Memory) }},
	{Name: ResourceGPU, Label: "nvidia_com_gpu", Of: func(r colocation.Resources) float64 { return float64(r.GPU) }},
}

// Pod is what the view keeps of a pod. Of its ObjectMeta only the
// namespace, name, UID and deletion timestamp are kept.
type Pod struct {
	metav1.ObjectMeta
	Node  string
	Phase corev1.PodPhase
	Tier  colocation.Tier
	QOS   corev1.PodQOSClass
	// TFJob is the name of the TFJob controlling an offline pod, and
	// ReplicaType the value of its replica-type label.
	TFJob, ReplicaType string
	Priority           int32
	// Started is when the kubelet started the pod (zero before).
	Started time.Time
	// Requests and Limits are as the scheduler counts them: init
	// containers, sidecars, pod-level resources and overhead folded in.
	Requests, Limits colocation.Resources
	// Batch is what the pod requests of reclaimed capacity.
	Batch colocation.Resources
	// StopReason and StopAt are the stop notice on the pod, if any: why
	// backfill stops it and when it gets SIGTERM at the latest.
	StopReason string
	StopAt     time.Time
	// Online is the latency objective of an online pod whose workload opts
	// in (colocation.LatencyObjectiveAnnotation), Workload its workload's
	// name (also kept for online pods that request GPUs); LatencyError says
	// why an opt-in was not taken.
	Online       *colocation.LatencyObjective
	Workload     string
	LatencyError string
	// WarmUp is, for an online pod that requests GPUs and is Ready, the
	// time from its creation to its Ready condition's last transition: its
	// workload's warm-up, as GPU loans measure it.
	WarmUp time.Duration
}

// Node is what the view keeps of a node. Of its ObjectMeta only the name
// and backfill's own annotations are kept.
type Node struct {
	metav1.ObjectMeta
	Capacity, Allocatable colocation.Resources
	// Batch is the reclaimed capacity the node publishes (its capacity of
	// the batch resources).
	Batch colocation.Resources
	// GPUModel is the node's colocation.GPUModelLabel: its GPUs' model,
	// which makes its GPU pool.
	GPUModel string
}

// summarisePod returns the cache transform of the view's pods, which tells
// online from offline with the manager's offline PriorityClass. A
// transform may see its own output again (resyncs), and tombstones carry
// a summary already.
func summarisePod(offlineClass string) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		switch pod := obj.(type) {
		case *Pod, toolscache.DeletedFinalStateUnknown:
			return obj, nil
		case *corev1.Pod:
			return PodSummary(pod, offlineClass), nil
		default:
			return nil, fmt.Errorf("summarising a pod: got %T", obj)
		}
	}
}

// PodSummary is what the view keeps of pod.
func PodSummary(pod *corev1.Pod, offlineClass string) *Pod {
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	// The strings many pods share are interned; names and UIDs are each
	// pod's own.
	s := &Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: intern.String(pod.Namespace), Name: pod.Name, UID: pod.UID, DeletionTimestamp: pod.DeletionTimestamp},
		Node:       intern.String(pod.Spec.NodeName),
		Phase:      corev1.PodPhase(intern.String(string(pod.Status.Phase))),
		Tier:       colocation.PodTier(pod, offlineClass),
		QOS:        corev1.PodQOSClass(intern.String(string(pod.Status.QOSClass))),
		Requests:   amountsOf(requests),
		Limits:     amountsOf(resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})),
		Batch:      colocation.BatchOf(requests),
	}
	if pod.Spec.Priority != nil {
		s.Priority = *pod.Spec.Priority
	}
	if pod.Status.StartTime != nil {
		s.Started = pod.Status.StartTime.Time
	}
	if reason, ok := pod.Annotations[colocation.StopReasonAnnotation]; ok {
		s.StopReason = intern.String(reason)
		s.StopAt, _ = time.Parse(time.RFC3339, pod.Annotations[colocation.StopAtAnnotation])
	}
	if s.Tier != colocation.TierOffline {
		online, err := colocation.LatencyObjectiveOf(pod.Annotations)
		if err != nil {
			s.LatencyError = err.Error()
		}
		if online != nil || err != nil {
			s.Online, s.Workload = online, intern.String(colocation.WorkloadOf(pod))
		}
		if s.Requests.GPU > 0 {
			s.Workload, s.WarmUp = intern.String(colocation.WorkloadOf(pod)), warmUpOf(pod)
		}
		return s
	}
	if name, ok := colocation.ControllingTFJob(pod); ok {
		s.TFJob = intern.String(name)
	}
	if rtype, ok := pod.Labels[kubeflowv1.ReplicaTypeLabel]; ok {
		s.ReplicaType = intern.String(rtype)
	}
	return s
}

// warmUpOf is the time from the pod's creation to its Ready condition's
// last transition, 0 while it is not Ready.
func warmUpOf(pod *corev1.Pod) time.Duration {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return max(c.LastTransitionTime.Sub(pod.CreationTimestamp.Time), 0)
		}
	}
	return 0
}

// summariseNode is the cache transform of the view's nodes.
func summariseNode(obj any) (any, error) {
	switch node := obj.(type) {
	case *Node, toolscache.DeletedFinalStateUnknown:
		return obj, nil
	case *corev1.Node:
		return NodeSummary(node), nil
	default:
		return nil, fmt.Errorf("summarising a node: got %T", obj)
	}
}

// NodeSummary is what the view keeps of node.
func NodeSummary(node *corev1.Node) *Node {
	var ours map[string]string
	for k, v := range node.Annotations {
		if strings.HasPrefix(k, colocation.AnnotationPrefix) {
			if ours == nil {
				ours = map[string]string{}
			}
			ours[k] = v
		}
	}
	return &Node{
		ObjectMeta:  metav1.ObjectMeta{Name: node.Name, Annotations: ours},
		Capacity:    amountsOf(node.Status.Capacity),
		Allocatable: amountsOf(node.Status.Allocatable),
		Batch:       colocation.BatchOf(node.Status.Capacity),
		GPUModel:    intern.String(node.Labels[colocation.GPUModelLabel]),
	}
}

// amountsOf reads the CPU, memory and GPUs of a list.
func amountsOf(list corev1.ResourceList) colocation.Resources {
	return colocation.Resources{
		MilliCPU: list.Cpu().MilliValue(),
		Memory:   list.Memory().Value(),
		GPU:      list.Name(ResourceGPU, resource.DecimalSI).Value(),
	}
}
