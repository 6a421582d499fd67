package metrics

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/clusterview"
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

// Resources are the values of the resource label: cpu in cores, memory in
// bytes, nvidia_com_gpu in devices.
var Resources = clusterview.Resources

// QOSClasses are the values of backfill_node_pods's qos_class label.
var QOSClasses = []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort}

// colocationState is the collector of the co-location state metrics.
var colocationState = newColocationCollector()

func newColocationCollector() *colocationCollector {
	return &colocationCollector{
		allocatable: newGaugeFamily(NameNodeAllocatable,
			"Allocatable resources of a node: cpu in cores, memory in bytes, nvidia_com_gpu in devices.",
			"node", "resource"),
		requests: newGaugeFamily(NameNodeRequests,
			"Requests of the non-terminated pods bound to a node, by tier (online or offline), as the scheduler counts them (init containers, sidecars and overhead included).",
			"node", "tier", "resource"),
		limits: newGaugeFamily(NameNodeLimits,
			"Limits of the non-terminated pods bound to a node, by tier; containers without a limit add nothing.",
			"node", "tier", "resource"),
		pods: newGaugeFamily(NameNodePods,
			"Non-terminated pods bound to a node, by tier and QoS class.",
			"node", "tier", "qos_class"),
		batchAllocatable: newGaugeFamily(NameNodeBatchAllocatable,
			"Reclaimed capacity a node publishes for offline pods (backfill.dev/batch-cpu and backfill.dev/batch-memory): cpu in cores, memory in bytes.",
			"node", "resource"),
		batchAllocated: newGaugeFamily(NameNodeBatchAllocated,
			"Reclaimed capacity that offline pods not terminating hold on a node (their batch requests): cpu in cores, memory in bytes.",
			"node", "resource"),
		offlinePod: newGaugeFamily(NameOfflinePodInfo,
			"1 per non-terminated offline pod bound to a node, with its TFJob and replica type (empty when no TFJob controls it): the key to join the kubelet's and dcgm-exporter's per-pod series with.",
			"namespace", "pod", "node", "tfjob", "replica_type"),
		onlinePod: newGaugeFamily(NameOnlinePodInfo,
			"1 per non-terminated online pod of a workload that declares a latency objective (backfill.dev/latency-objective), bound to a node, with its workload and whether offline pods run on its node (offline_beside): the key to join the workload's latency histogram with.",
			"namespace", "pod", "node", "workload", "offline_beside"),
		objective: newGaugeFamily(NameOnlineObjective,
			"The P99 request latency an online workload declares as its objective (backfill.dev/latency-objective).",
			"namespace", "workload"),
	}
}

// colocationSource is where the collector reads nodes and pods from: the
// cluster view, once it has synced.
type colocationSource interface {
	Synced() bool
	Nodes() []*clusterview.Node
	Pods() []*clusterview.Pod
}

// colocationCollector reports, at every scrape, the co-location state of
// every node from the co-location view. It reports nothing until the view
// has synced, which happens only on the leader.
type colocationCollector struct {
	allocatable, requests, limits, pods, offlinePod gaugeFamily
	batchAllocatable, batchAllocated                gaugeFamily
	onlinePod, objective                            gaugeFamily

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
	for _, f := range []gaugeFamily{c.allocatable, c.requests, c.limits, c.pods, c.batchAllocatable, c.batchAllocated, c.offlinePod, c.onlinePod, c.objective} {
		ch <- f.desc
	}
}

// Collect implements prometheus.Collector.
func (c *colocationCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	source := c.source
	c.mu.Unlock()
	if source == nil || !source.Synced() {
		return
	}
	c.send(ch, tally(source.Nodes(), source.Pods()))
}

// nodeState is what the metrics say about one node.
type nodeState struct {
	allocatable colocation.Resources
	requests    map[colocation.Tier]colocation.Resources
	limits      map[colocation.Tier]colocation.Resources
	pods        map[colocation.Tier]map[corev1.PodQOSClass]int
	// batch is the reclaimed capacity published, batchHeld what offline
	// pods not terminating hold of it.
	batch, batchHeld colocation.Resources
}

func newNodeState() *nodeState {
	s := &nodeState{
		requests: map[colocation.Tier]colocation.Resources{},
		limits:   map[colocation.Tier]colocation.Resources{},
		pods:     map[colocation.Tier]map[corev1.PodQOSClass]int{},
	}
	for _, t := range colocation.Tiers {
		s.pods[t] = map[corev1.PodQOSClass]int{}
	}
	return s
}

// colocationTally is the state of every node, and the offline pods.
type colocationTally struct {
	nodes   map[string]*nodeState
	offline []*clusterview.Pod
	// online are the online pods that declare a latency objective.
	online []*clusterview.Pod
	// offlineOn are the nodes where offline pods not terminating run.
	offlineOn map[string]bool
}

// tally adds up the pods bound to a node by node and tier. A pod bound to
// a node the view does not (yet) hold still counts, under its node's name.
func tally(nodes []*clusterview.Node, pods []*clusterview.Pod) colocationTally {
	t := colocationTally{nodes: map[string]*nodeState{}, offlineOn: map[string]bool{}}
	for _, n := range nodes {
		s := newNodeState()
		s.allocatable = n.Allocatable
		s.batch = n.Batch
		t.nodes[n.Name] = s
	}
	for _, pod := range pods {
		if pod.Node == "" {
			continue
		}
		s := t.nodes[pod.Node]
		if s == nil {
			s = newNodeState()
			t.nodes[pod.Node] = s
		}
		s.requests[pod.Tier] = s.requests[pod.Tier].Add(pod.Requests)
		s.limits[pod.Tier] = s.limits[pod.Tier].Add(pod.Limits)
		s.pods[pod.Tier][pod.QOS]++
		if pod.DeletionTimestamp == nil {
			s.batchHeld = s.batchHeld.Add(pod.Batch)
		}
		switch {
		case pod.Tier == colocation.TierOffline:
			t.offline = append(t.offline, pod)
			t.offlineOn[pod.Node] = t.offlineOn[pod.Node] || pod.DeletionTimestamp == nil
		case pod.Online != nil:
			t.online = append(t.online, pod)
		}
	}
	return t
}

// send emits every series of a tally: every resource, tier and QoS class
// of every node, zeros included, so that ratios and dashboards never miss
// a side.
func (c *colocationCollector) send(ch chan<- prometheus.Metric, t colocationTally) {
	gauge := newScrape(ch).gauge
	for node, s := range t.nodes {
		for _, r := range Resources {
			gauge(c.allocatable, r.Of(s.allocatable), node, r.Label)
			for _, tier := range colocation.Tiers {
				gauge(c.requests, r.Of(s.requests[tier]), node, string(tier), r.Label)
				gauge(c.limits, r.Of(s.limits[tier]), node, string(tier), r.Label)
			}
		}
		for _, tier := range colocation.Tiers {
			for _, qos := range QOSClasses {
				gauge(c.pods, float64(s.pods[tier][qos]), node, string(tier), string(qos))
			}
		}
		gauge(c.batchAllocatable, float64(s.batch.MilliCPU)/1000, node, "cpu")
		gauge(c.batchAllocatable, float64(s.batch.Memory), node, "memory")
		gauge(c.batchAllocated, float64(s.batchHeld.MilliCPU)/1000, node, "cpu")
		gauge(c.batchAllocated, float64(s.batchHeld.Memory), node, "memory")
	}
	for _, p := range t.offline {
		gauge(c.offlinePod, 1, p.Namespace, p.Name, p.Node, p.TFJob, offlineReplicaType(p))
	}
	objectives := map[[2]string]float64{}
	for _, p := range t.online {
		gauge(c.onlinePod, 1, p.Namespace, p.Name, p.Node, p.Workload, strconv.FormatBool(t.offlineOn[p.Node]))
		objectives[[2]string{p.Namespace, p.Workload}] = p.Online.P99.Seconds()
	}
	for w, v := range objectives {
		gauge(c.objective, v, w[0], w[1])
	}
}

// offlineReplicaType is the replica_type label of an offline pod's info
// series: empty for a pod of no TFJob.
func offlineReplicaType(p *clusterview.Pod) string {
	if p.ReplicaType == "" {
		return ""
	}
	return replicaTypeLabel(p.ReplicaType)
}
