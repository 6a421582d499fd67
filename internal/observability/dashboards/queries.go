package dashboards

import (
	"fmt"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// Unit is a Grafana unit id; `backfill top` formats values by it too.
type Unit string

// The units of backfill's panels.
const (
	UnitCores   Unit = "suffix: cores"
	UnitBytes   Unit = "bytes"
	UnitPercent Unit = "percent"
	UnitCount   Unit = "none"
	UnitSeconds Unit = "s"
	// UnitPerMinute is events per minute, e.g. evictions.
	UnitPerMinute Unit = "suffix: /min"
	// UnitSecondsPerSecond is time spent per second of the clock, summed
	// over threads or pods, e.g. waiting for a CPU: it may exceed 1.
	UnitSecondsPerSecond Unit = "suffix: s/s"
	// UnitHours is hours, e.g. GPU-hours.
	UnitHours Unit = "h"
)

// Query is one PromQL query of a panel, written against the dashboards'
// variables ($namespace, $tfjob, $__rate_interval), and the name its
// series are shown under: a legend format, or a table column.
type Query struct {
	Expr   string
	Legend string
}

// Figure is a number the cockpit shows as a Stat panel and `backfill top`
// prints in its header line.
type Figure struct {
	Title       string
	Description string
	Unit        Unit
	Query       Query
}

// Column is one column of the per-node watermark table: a query with one
// series per node, labelled node.
type Column struct {
	Name string
	Unit Unit
	Expr string
}

// Label values of the manager's co-location metrics.
const (
	resourceCPU    = "cpu"
	resourceMemory = "memory"
	resourceGPU    = "nvidia_com_gpu"
)

var (
	online  = string(colocation.TierOnline)
	offline = string(colocation.TierOffline)
)

// rateInterval is Grafana's rate window: at least four scrapes, whatever
// the scrape interval of the user's Prometheus.
const rateInterval = "$__rate_interval"

// offlinePodsSelected is 1 per offline pod in the namespaces and TFJobs
// the variables select; "and on (namespace, pod)" with it scopes a per-pod
// expression to them.
const offlinePodsSelected = expr.MetricOfflinePodInfo + `{namespace=~"$namespace",tfjob=~"$tfjob"}`

// selectedGPUUtil is the utilisation of each GPU of the selected TFJobs'
// pods, labelled namespace, pod, gpu, UUID, node, tfjob and replica_type.
func selectedGPUUtil() string {
	return "(" + expr.OfflineGPUUtilByGPU() + ") and on (namespace, pod) " + offlinePodsSelected
}

// GPUUtilByTFJobPod is the average utilisation of each selected TFJob
// pod's GPUs, for the GPU library panel.
func GPUUtilByTFJobPod() Query {
	return Query{
		Expr:   "avg by (namespace, tfjob, replica_type, pod) (" + selectedGPUUtil() + ")",
		Legend: "{{namespace}}/{{pod}} ({{replica_type}})",
	}
}

// requestsByTier sums a tier's requests of a resource over nodes.
func requestsByTier(tier, resource string) string {
	return fmt.Sprintf(`sum(backfill_node_requests{tier=%q,resource=%q})`, tier, resource)
}

// allocatable sums a resource's allocatable over nodes, by the labels given.
func allocatable(resource, by string) string {
	return fmt.Sprintf(`sum%s(backfill_node_allocatable{resource=%q})`, by, resource)
}

// gpusFree is allocatable GPUs minus those requested, by the grouping
// given; a node where no pod holds a GPU has no request series, hence the
// "or" with zero requests per node.
func gpusFree(by string) string {
	requested := fmt.Sprintf(`sum%s(backfill_node_requests{resource=%q})`, by, resourceGPU)
	return fmt.Sprintf(`%s - (%s or %s * 0)`, allocatable(resourceGPU, by), requested, allocatable(resourceGPU, by))
}

// CockpitFigures are the cockpit's Stat panels, left to right.
func CockpitFigures() []Figure {
	return []Figure{
		{
			Title:       "Online CPU used",
			Description: "CPU cores that online pods (every pod that is not offline) use now, summed over all nodes, from the kubelet's per-container usage.",
			Unit:        UnitCores,
			Query:       Query{Expr: "sum(" + expr.OnlineCPUUsedByNodeOver(rateInterval) + ")", Legend: "online"},
		},
		{
			Title:       "Offline CPU used",
			Description: "CPU cores that offline pods (TFJob pods, the offline PriorityClass, or label backfill.dev/tier=offline) use now, summed over all nodes.",
			Unit:        UnitCores,
			Query:       Query{Expr: "sum(" + expr.OfflineCPUUsedByNodeOver(rateInterval) + ")", Legend: "offline"},
		},
		{
			Title:       "GPU utilisation of training pods",
			Description: "Average utilisation (dcgm-exporter DCGM_FI_DEV_GPU_UTIL) of the GPUs held by the selected TFJobs' pods. Low values mean GPUs reserved but idle.",
			Unit:        UnitPercent,
			Query:       Query{Expr: "avg(" + selectedGPUUtil() + ")", Legend: "GPU utilisation"},
		},
		{
			Title:       "GPUs free",
			Description: "nvidia.com/gpu allocatable on all nodes minus what non-terminated pods request: the GPUs a new TFJob can get now.",
			Unit:        UnitCount,
			Query:       Query{Expr: gpusFree(""), Legend: "free"},
		},
		{
			Title: "Cluster CPU utilisation",
			Description: "CPU that online and offline pods use together, in percent of the CPU all nodes can allocate: how much of the cluster really works. " +
				"Online services alone, requesting far more than they use, leave it low; offline work in the reclaimed capacity raises it.",
			Unit:  UnitPercent,
			Query: Query{Expr: utilisation(expr.CPUUsedByNodeOver(rateInterval), resourceCPU), Legend: "CPU utilisation"},
		},
		{
			Title:       "Cluster memory utilisation",
			Description: "Working set of online and offline pods together, in percent of the memory all nodes can allocate.",
			Unit:        UnitPercent,
			Query:       Query{Expr: utilisation(expr.MemoryUsedByNode(), resourceMemory), Legend: "memory utilisation"},
		},
	}
}

// utilisation is what every pod uses of a resource, online and offline
// together (a per-node fragment of package expr), in percent of what all
// nodes can allocate. It reads every pod's use in one fragment rather than
// adding the two tiers, so that it has data while no offline pod runs.
func utilisation(usedByNode, resource string) string {
	return fmt.Sprintf("100 * sum(%s) / %s", usedByNode, allocatable(resource, ""))
}

// CPUUsedByTier is the CPU online and offline pods use, summed over nodes:
// the two stacked areas of the CPU watermark panel, and the two lines of
// `backfill top`'s chart.
func CPUUsedByTier() []Query {
	return []Query{
		{Expr: "sum(" + expr.OnlineCPUUsedByNodeOver(rateInterval) + ")", Legend: "online used"},
		{Expr: "sum(" + expr.OfflineCPUUsedByNodeOver(rateInterval) + ")", Legend: "offline used"},
	}
}

// CPUByTier are the queries of the CPU watermark library panel: online and
// offline use stacked, with allocatable and requests as lines to compare.
func CPUByTier() []Query {
	return append(CPUUsedByTier(),
		Query{Expr: requestsByTier(online, resourceCPU), Legend: "online requested"},
		Query{Expr: requestsByTier(offline, resourceCPU), Legend: "offline requested"},
		Query{Expr: allocatable(resourceCPU, ""), Legend: "allocatable"},
	)
}

// nodeGauge sums one of the manager's per-node gauges by node.
func nodeGauge(metric, matchers string) string {
	return fmt.Sprintf("sum by (node) (%s{%s})", metric, matchers)
}

// WatermarkColumns are the per-node watermark table's columns after the
// node name, as the cockpit's table and `backfill top` show them.
func WatermarkColumns() []Column {
	tierRes := func(tier, res string) string { return fmt.Sprintf(`tier=%q,resource=%q`, tier, res) }
	return []Column{
		{Name: "Pods online", Unit: UnitCount, Expr: nodeGauge("backfill_node_pods", fmt.Sprintf("tier=%q", online))},
		{Name: "Pods offline", Unit: UnitCount, Expr: nodeGauge("backfill_node_pods", fmt.Sprintf("tier=%q", offline))},
		{Name: "CPU allocatable", Unit: UnitCores, Expr: allocatable(resourceCPU, " by (node) ")},
		{Name: "CPU req online", Unit: UnitCores, Expr: nodeGauge("backfill_node_requests", tierRes(online, resourceCPU))},
		{Name: "CPU req offline", Unit: UnitCores, Expr: nodeGauge("backfill_node_requests", tierRes(offline, resourceCPU))},
		{Name: "CPU used online", Unit: UnitCores, Expr: expr.OnlineCPUUsedByNodeOver(rateInterval)},
		{Name: "CPU used offline", Unit: UnitCores, Expr: expr.OfflineCPUUsedByNodeOver(rateInterval)},
		{Name: "CPU reclaimable", Unit: UnitCores, Expr: batchByNode(metrics.NameNodeBatchAllocatable, resourceCPU)},
		{Name: "CPU offline holds", Unit: UnitCores, Expr: batchByNode(metrics.NameNodeBatchAllocated, resourceCPU)},
		{Name: "Mem allocatable", Unit: UnitBytes, Expr: allocatable(resourceMemory, " by (node) ")},
		{Name: "Mem req online", Unit: UnitBytes, Expr: nodeGauge("backfill_node_requests", tierRes(online, resourceMemory))},
		{Name: "Mem req offline", Unit: UnitBytes, Expr: nodeGauge("backfill_node_requests", tierRes(offline, resourceMemory))},
		{Name: "Mem used online", Unit: UnitBytes, Expr: expr.OnlineMemoryUsedByNode()},
		{Name: "Mem used offline", Unit: UnitBytes, Expr: expr.OfflineMemoryUsedByNode()},
		{Name: "Mem reclaimable", Unit: UnitBytes, Expr: batchByNode(metrics.NameNodeBatchAllocatable, resourceMemory)},
		{Name: "Mem offline holds", Unit: UnitBytes, Expr: batchByNode(metrics.NameNodeBatchAllocated, resourceMemory)},
		{Name: "Guaranteed", Unit: UnitCount, Expr: nodeGauge("backfill_node_pods", `qos_class="Guaranteed"`)},
		{Name: "Burstable", Unit: UnitCount, Expr: nodeGauge("backfill_node_pods", `qos_class="Burstable"`)},
		{Name: "BestEffort", Unit: UnitCount, Expr: nodeGauge("backfill_node_pods", `qos_class="BestEffort"`)},
		{Name: "GPUs allocated", Unit: UnitCount, Expr: nodeGauge("backfill_node_requests", fmt.Sprintf("resource=%q", resourceGPU))},
		{Name: "GPUs free", Unit: UnitCount, Expr: gpusFree(" by (node) ")},
		{Name: "Reclaim frozen", Unit: UnitCount, Expr: frozenByNode()},
	}
}
