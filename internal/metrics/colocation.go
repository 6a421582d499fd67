package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// The co-location state metrics' names.
const (
	NameNodeAllocatable = "backfill_node_allocatable"
	NameNodeRequests    = "backfill_node_requests"
	NameNodeLimits      = "backfill_node_limits"
	NameNodePods        = "backfill_node_pods"
	NameOfflinePodInfo  = "backfill_offline_pod_info"
)

// resourceGPU is the extended resource of NVIDIA's device plugin.
const resourceGPU = corev1.ResourceName("nvidia.com/gpu")

// Resource is a resource the co-location metrics report, with the value
// of their resource label and the unit of the value.
type Resource struct {
	Name  corev1.ResourceName
	Label string
}

// Resources are the values of the resource label: cpu in cores, memory in
// bytes, nvidia_com_gpu in devices.
var Resources = []Resource{
	{Name: corev1.ResourceCPU, Label: "cpu"},
	{Name: corev1.ResourceMemory, Label: "memory"},
	{Name: resourceGPU, Label: "nvidia_com_gpu"},
}

// QOSClasses are the values of backfill_node_pods's qos_class label.
var QOSClasses = []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort}

// colocationState is the collector of the co-location state metrics.
var colocationState = newColocationCollector()

func newColocationCollector() *colocationCollector {
	return &colocationCollector{
		allocatable: prometheus.NewDesc(NameNodeAllocatable,
			"Allocatable resources of a node: cpu in cores, memory in bytes, nvidia_com_gpu in devices.",
			[]string{"node", "resource"}, nil),
		requests: prometheus.NewDesc(NameNodeRequests,
			"Requests of the non-terminated pods bound to a node, by tier (online or offline), as the scheduler counts them (init containers, sidecars and overhead included).",
			[]string{"node", "tier", "resource"}, nil),
		limits: prometheus.NewDesc(NameNodeLimits,
			"Limits of the non-terminated pods bound to a node, by tier; containers without a limit add nothing.",
			[]string{"node", "tier", "resource"}, nil),
		pods: prometheus.NewDesc(NameNodePods,
			"Non-terminated pods bound to a node, by tier and QoS class.",
			[]string{"node", "tier", "qos_class"}, nil),
		offlinePod: prometheus.NewDesc(NameOfflinePodInfo,
			"1 per non-terminated offline pod bound to a node, with its TFJob and replica type (empty when no TFJob controls it): the key to join the kubelet's and dcgm-exporter's per-pod series with.",
			[]string{"namespace", "pod", "node", "tfjob", "replica_type"}, nil),
	}
}

// colocationSource is where the collector reads nodes and pods from: the
// co-location view, once it has synced.
type colocationSource interface {
	snapshot() ([]*nodeSummary, []*podSummary)
}

// colocationCollector reports, at every scrape, the co-location state of
// every node from the co-location view. It reports nothing until the view
// has synced, which happens only on the leader.
type colocationCollector struct {
	allocatable, requests, limits, pods, offlinePod *prometheus.Desc

	mu     sync.Mutex
	source colocationSource
}

// use sets the synced view to read; nil turns the collector off.
func (c *colocationCollector) use(source colocationSource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.source = source
}

// Describe implements prometheus.Collector.
func (c *colocationCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.allocatable, c.requests, c.limits, c.pods, c.offlinePod} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *colocationCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	source := c.source
	c.mu.Unlock()
	if source == nil {
		return
	}
	c.send(ch, tally(source.snapshot()))
}

// nodeState is what the metrics say about one node.
type nodeState struct {
	allocatable amounts
	requests    map[colocation.Tier]*amounts
	limits      map[colocation.Tier]*amounts
	pods        map[colocation.Tier]map[corev1.PodQOSClass]int
}

func newNodeState() *nodeState {
	s := &nodeState{
		requests: map[colocation.Tier]*amounts{},
		limits:   map[colocation.Tier]*amounts{},
		pods:     map[colocation.Tier]map[corev1.PodQOSClass]int{},
	}
	for _, t := range colocation.Tiers {
		s.requests[t], s.limits[t], s.pods[t] = &amounts{}, &amounts{}, map[corev1.PodQOSClass]int{}
	}
	return s
}

// colocationTally is the state of every node, and the offline pods.
type colocationTally struct {
	nodes   map[string]*nodeState
	offline []*podSummary
}

// tally adds up the pods bound to a node by node and tier. A pod bound to
// a node the view does not (yet) hold still counts, under its node's name.
func tally(nodes []*nodeSummary, pods []*podSummary) colocationTally {
	t := colocationTally{nodes: map[string]*nodeState{}}
	for _, n := range nodes {
		s := newNodeState()
		s.allocatable = n.allocatable
		t.nodes[n.Name] = s
	}
	for _, pod := range pods {
		if pod.node == "" {
			continue
		}
		s := t.nodes[pod.node]
		if s == nil {
			s = newNodeState()
			t.nodes[pod.node] = s
		}
		for i := range Resources {
			s.requests[pod.tier][i] += pod.requests[i]
			s.limits[pod.tier][i] += pod.limits[i]
		}
		s.pods[pod.tier][pod.qos]++
		if pod.tier == colocation.TierOffline {
			t.offline = append(t.offline, pod)
		}
	}
	return t
}

// send emits every series of a tally: every resource, tier and QoS class
// of every node, zeros included, so that ratios and dashboards never miss
// a side.
func (c *colocationCollector) send(ch chan<- prometheus.Metric, t colocationTally) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for node, s := range t.nodes {
		for i, r := range Resources {
			gauge(c.allocatable, s.allocatable[i], node, r.Label)
			for _, tier := range colocation.Tiers {
				gauge(c.requests, s.requests[tier][i], node, string(tier), r.Label)
				gauge(c.limits, s.limits[tier][i], node, string(tier), r.Label)
			}
		}
		for _, tier := range colocation.Tiers {
			for _, qos := range QOSClasses {
				gauge(c.pods, float64(s.pods[tier][qos]), node, string(tier), string(qos))
			}
		}
	}
	for _, p := range t.offline {
		gauge(c.offlinePod, 1, p.Namespace, p.Name, p.node, p.tfjob, p.replicaType)
	}
}
