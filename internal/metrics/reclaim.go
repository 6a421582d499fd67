package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The reclaimed-capacity metrics' names. The published batch capacity and
// what offline pods hold of it come from the cluster view with the other
// per-node gauges (colocation.go); these come from the reclaim
// controller's decisions.
const (
	NameNodeBatchAllocatable = "backfill_node_batch_allocatable"
	NameNodeBatchAllocated   = "backfill_node_batch_allocated"
	NameReclaimTarget        = "backfill_reclaim_target"
	NameReclaimOnlinePeak    = "backfill_reclaim_online_peak"
	NameReclaimUsageAge      = "backfill_reclaim_usage_age_seconds"
	NameReclaimFrozen        = "backfill_reclaim_node_frozen"
	NameReclaimSourceUp      = "backfill_reclaim_usage_source_up"
	NameReclaimSyncDuration  = "backfill_reclaim_sync_duration_seconds"
	NameReclaimNodeWrites    = "backfill_reclaim_node_writes_total"
	NameReclaimEvictions     = "backfill_reclaim_evictions_total"
)

// Eviction results, the values of backfill_reclaim_evictions_total's
// result label.
const (
	EvictionEvicted = "evicted"
	// EvictionRefused: the Eviction API refused, e.g. a PodDisruptionBudget.
	EvictionRefused = "refused"
)

// BatchResources are the values of the reclaim metrics' resource label:
// cpu in cores, memory in bytes.
var BatchResources = []string{"cpu", "memory"}

var (
	reclaimTarget = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameReclaimTarget,
		Help: "What the reclaimed capacity of a node should be by the formula (capacity - margin - system - online peak - offline on requests), before hysteresis: cpu in cores, memory in bytes.",
	}, []string{"node", "resource"})
	reclaimOnlinePeak = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameReclaimOnlinePeak,
		Help: "Peak over the reclaim window of what a node's online pods used together: cpu in cores, memory in bytes.",
	}, []string{"node", "resource"})
	reclaimUsageAge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameReclaimUsageAge,
		Help: "Age of the newest usage sample of a node at the last decision; absent for a node the usage source has no data for.",
	}, []string{"node"})
	reclaimFrozen = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameReclaimFrozen,
		Help: "1 while a node's reclaimed capacity is frozen because its usage is stale or missing (no growth, no evictions), else 0.",
	}, []string{"node"})
	reclaimSourceUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameReclaimSourceUp,
		Help: "1 when the last query of the usage source succeeded, else 0, by source: prometheus or metrics-api.",
	}, []string{"source"})
	// Vectors without labels, like every metric here, so that tests can
	// reset them.
	reclaimSyncDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    NameReclaimSyncDuration,
		Help:    "Time one decision over every node took: usage queries, node writes and evictions.",
		Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, nil)
	reclaimNodeWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameReclaimNodeWrites,
		Help: "PATCHes of a node: its reclaimed capacity with its explanation annotation, or the explanation alone.",
	}, nil)
	reclaimEvictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameReclaimEvictions,
		Help: "Offline pods the manager evicted to protect online pods, by the resource whose deficit chose them (cpu or memory) and result (evicted, or refused by the Eviction API, e.g. a PodDisruptionBudget).",
	}, []string{"resource", "result"})
)

// NodeDecision records the latest decision of a node's reclaimed capacity.
// target and onlinePeak are milli-CPU and bytes; usageAge is negative when
// the node has no usage.
func NodeDecision(node string, targetMilliCPU, targetMemory, peakMilliCPU, peakMemory int64, usageAge time.Duration, frozen bool) {
	reclaimTarget.WithLabelValues(node, "cpu").Set(float64(targetMilliCPU) / 1000)
	reclaimTarget.WithLabelValues(node, "memory").Set(float64(targetMemory))
	reclaimOnlinePeak.WithLabelValues(node, "cpu").Set(float64(peakMilliCPU) / 1000)
	reclaimOnlinePeak.WithLabelValues(node, "memory").Set(float64(peakMemory))
	if usageAge >= 0 {
		reclaimUsageAge.WithLabelValues(node).Set(usageAge.Seconds())
	} else {
		reclaimUsageAge.DeleteLabelValues(node)
	}
	v := 0.0
	if frozen {
		v = 1
	}
	reclaimFrozen.WithLabelValues(node).Set(v)
}

// NodeGone forgets the decisions of a node that no longer exists.
func NodeGone(node string) {
	for _, r := range BatchResources {
		reclaimTarget.DeleteLabelValues(node, r)
		reclaimOnlinePeak.DeleteLabelValues(node, r)
	}
	reclaimUsageAge.DeleteLabelValues(node)
	reclaimFrozen.DeleteLabelValues(node)
	NodeOnlineHold(node, "")
}

// UsageSourceUp records whether the last query of a usage source
// succeeded.
func UsageSourceUp(source string, up bool) {
	v := 0.0
	if up {
		v = 1
	}
	reclaimSourceUp.WithLabelValues(source).Set(v)
}

// ReclaimSynced records one decision over every node.
func ReclaimSynced(took time.Duration) { reclaimSyncDuration.WithLabelValues().Observe(took.Seconds()) }

// NodeWritten counts a write of a node's reclaimed capacity.
func NodeWritten() { reclaimNodeWrites.WithLabelValues().Inc() }

// Evicted counts an eviction for online protection; resource is "cpu" or
// "memory", result EvictionEvicted or EvictionRefused.
func Evicted(resource, result string) { reclaimEvictions.WithLabelValues(resource, result).Inc() }
