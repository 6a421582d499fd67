package latencysim

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// PodLoad is one opted-in online pod and its Load.
type PodLoad struct {
	Namespace, Pod string
	UID            types.UID
	Node           string
	// Metric is the histogram's name: the first the pod's opt-in reads.
	Metric string
	Load   Load
}

// Loads are the Loads of the running pods that opt in to latency
// protection, ordered by namespace and name. A pod's CPU use is its kwok
// usage annotation, which kwok applies to each of its containers; a node's
// use and requests add up every pod running on it. Pods whose opt-in is
// malformed are left out: the manager reports those.
func Loads(nodes []corev1.Node, pods []corev1.Pod) []PodLoad {
	capacity := map[string]float64{}
	for _, n := range nodes {
		capacity[n.Name] = cores(n.Status.Capacity[corev1.ResourceCPU])
	}
	use, requests := map[string]float64{}, map[string]float64{}
	for i := range pods {
		p := &pods[i]
		if running(p) {
			use[p.Spec.NodeName] += podUse(p)
			requests[p.Spec.NodeName] += podRequest(p)
		}
	}
	var out []PodLoad
	for i := range pods {
		p := &pods[i]
		o, err := colocation.LatencyObjectiveOf(p.Annotations)
		if !running(p) || o == nil || err != nil || len(o.Metrics) == 0 {
			continue
		}
		node := p.Spec.NodeName
		out = append(out, PodLoad{
			Namespace: p.Namespace, Pod: p.Name, UID: p.UID, Node: node, Metric: o.Metrics[0],
			Load: Load{
				Use:          podUse(p),
				Request:      podRequest(p),
				Limit:        podLimit(p),
				NodeCapacity: capacity[node], NodeUse: use[node], NodeRequests: requests[node],
			},
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Pod < out[j].Pod
	})
	return out
}

// running reports whether a pod runs on a node: a terminating pod still
// does until it is gone.
func running(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning
}

// podUse is a pod's CPU use in cores: its kwok usage annotation for each
// container, 0 without a valid one.
func podUse(p *corev1.Pod) float64 {
	q, err := resource.ParseQuantity(p.Annotations[kwok.UsageCPUAnnotation])
	if err != nil || q.Sign() < 0 {
		return 0
	}
	return cores(q) * float64(len(p.Spec.Containers))
}

// podRequest is the CPU a pod's containers request.
func podRequest(p *corev1.Pod) float64 {
	sum := 0.0
	for _, c := range p.Spec.Containers {
		sum += cores(c.Resources.Requests[corev1.ResourceCPU])
	}
	return sum
}

// podLimit is a pod's CPU limit, 0 unless every container has one.
func podLimit(p *corev1.Pod) float64 {
	sum := 0.0
	for _, c := range p.Spec.Containers {
		q, ok := c.Resources.Limits[corev1.ResourceCPU]
		if !ok {
			return 0
		}
		sum += cores(q)
	}
	return sum
}

func cores(q resource.Quantity) float64 { return float64(q.MilliValue()) / 1000 }
