package metrics

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// amounts are the quantities of Resources, in their metrics' units and
// order.
type amounts [3]float64

// podSummary is what the co-location view keeps of a pod: the cache
// transform turns each pod into one as it arrives, so the view holds a few
// hundred bytes per pod whatever the pod's size. Only the pod's name and
// namespace are kept in ObjectMeta, for the informer's key.
type podSummary struct {
	metav1.ObjectMeta
	node string
	tier colocation.Tier
	qos  corev1.PodQOSClass
	// tfjob and replicaType label an offline pod's info series.
	tfjob, replicaType string
	// requests and limits are as the scheduler counts them: init
	// containers, sidecars, pod-level resources and overhead folded in.
	requests, limits amounts
}

// nodeSummary is what the co-location view keeps of a node.
type nodeSummary struct {
	metav1.ObjectMeta
	allocatable amounts
}

// summarisePod returns the cache transform of the view's pods, which tells
// online from offline with the manager's offline PriorityClass. A
// transform may see its own output again (resyncs), and tombstones carry
// a summary already.
func summarisePod(offlineClass string) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		switch pod := obj.(type) {
		case *podSummary, toolscache.DeletedFinalStateUnknown:
			return obj, nil
		case *corev1.Pod:
			return podSummaryOf(pod, offlineClass), nil
		default:
			return nil, fmt.Errorf("summarising a pod: got %T", obj)
		}
	}
}

func podSummaryOf(pod *corev1.Pod, offlineClass string) *podSummary {
	s := &podSummary{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		node:       pod.Spec.NodeName,
		tier:       colocation.PodTier(pod, offlineClass),
		qos:        pod.Status.QOSClass,
		requests:   amountsOf(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})),
		limits:     amountsOf(resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})),
	}
	if s.tier != colocation.TierOffline {
		return s
	}
	if name, ok := colocation.ControllingTFJob(pod); ok {
		s.tfjob = name
	}
	if rtype, ok := pod.Labels[kubeflowv1.ReplicaTypeLabel]; ok {
		s.replicaType = replicaTypeLabel(rtype)
	}
	return s
}

// summariseNode is the cache transform of the view's nodes.
func summariseNode(obj any) (any, error) {
	switch node := obj.(type) {
	case *nodeSummary, toolscache.DeletedFinalStateUnknown:
		return obj, nil
	case *corev1.Node:
		return &nodeSummary{
			ObjectMeta:  metav1.ObjectMeta{Name: node.Name},
			allocatable: amountsOf(node.Status.Allocatable),
		}, nil
	default:
		return nil, fmt.Errorf("summarising a node: got %T", obj)
	}
}

// amountsOf reads the resources of Resources off a list, in their units.
func amountsOf(list corev1.ResourceList) amounts {
	var a amounts
	for i, r := range Resources {
		a[i] = quantity(list, r.Name)
	}
	return a
}

// quantity is a resource in its metric's unit: cores for cpu, else the
// plain value (bytes, devices).
func quantity(list corev1.ResourceList, name corev1.ResourceName) float64 {
	q, ok := list[name]
	if !ok {
		return 0
	}
	if name == corev1.ResourceCPU {
		return float64(q.MilliValue()) / 1000
	}
	return q.AsApproximateFloat64()
}
