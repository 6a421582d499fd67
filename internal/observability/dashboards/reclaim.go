package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// The cockpit's picture of reclaimed capacity: what online pods request
// and use, what the nodes publish for offline pods from the difference
// (backfill.dev/batch-cpu, backfill.dev/batch-memory), what offline pods
// hold and use of it, and the evictions that protect online pods.

// everyNodeAtZero is 0 for every node the manager reports, labelled node,
// read from the allocatable of the resource a column shows.
func everyNodeAtZero(resource string) string {
	return allocatable(resource, " by (node) ") + " * 0"
}

// orZeroPerNode reads a per-node expression as 0 on the nodes where it has
// no series. A manager older than reclaimed capacity exports no batch
// series, and one run with --reclaim=false no frozen series: those nodes
// publish nothing and nothing on them is frozen, which 0 says, where a
// blank cell would look like a broken scrape (and `backfill doctor` would
// report a column without data).
func orZeroPerNode(byNode, resource string) string {
	return byNode + " or " + everyNodeAtZero(resource)
}

// batchByNode is one of the manager's batch gauges (published reclaimed
// capacity, or what offline pods hold of it) per node.
func batchByNode(metric, resource string) string {
	return orZeroPerNode(nodeGauge(metric, fmt.Sprintf("resource=%q", resource)), resource)
}

// batchSum is one of the manager's batch gauges summed over nodes.
func batchSum(metric, resource string) string {
	return fmt.Sprintf("sum(%s{resource=%q})", metric, resource)
}

// frozenByNode is 1 on a node whose reclaimed capacity is frozen on stale
// or missing usage, else 0. max, not sum: it is a flag, and two replicas
// scraped during a leader change must not read 2.
func frozenByNode() string {
	return orZeroPerNode("max by (node) ("+metrics.NameReclaimFrozen+")", resourceCPU)
}

// ReclaimedCPU are the queries of the cockpit's reclaimed CPU panel, in
// cores summed over nodes.
func ReclaimedCPU() []Query {
	return []Query{
		{Expr: requestsByTier(online, resourceCPU), Legend: "online requested"},
		{Expr: "sum(" + expr.OnlineCPUUsedByNodeOver(rateInterval) + ")", Legend: "online used"},
		{Expr: batchSum(metrics.NameNodeBatchAllocatable, resourceCPU), Legend: "reclaimable"},
		{Expr: "sum(" + expr.OfflineCPUUsedByNodeOver(rateInterval) + ")", Legend: "offline used"},
	}
}

// ReclaimedMemory are the queries of the cockpit's reclaimed memory panel,
// in bytes summed over nodes. Unlike CPU, memory shows what offline pods
// hold of the reclaimed capacity: memory cannot be throttled back, so
// holds near reclaimable are what an online rise evicts.
func ReclaimedMemory() []Query {
	return []Query{
		{Expr: requestsByTier(online, resourceMemory), Legend: "online requested"},
		{Expr: "sum(" + expr.OnlineMemoryUsedByNode() + ")", Legend: "online used"},
		{Expr: batchSum(metrics.NameNodeBatchAllocatable, resourceMemory), Legend: "reclaimable"},
		{Expr: batchSum(metrics.NameNodeBatchAllocated, resourceMemory), Legend: "offline holds"},
		{Expr: "sum(" + expr.OfflineMemoryUsedByNode() + ")", Legend: "offline used"},
	}
}

// ReclaimEvictions are the evictions for online protection per minute, by
// the resource whose shortage chose the pods: those carried out, and those
// the Eviction API refused (a PodDisruptionBudget), which leave online
// pods short.
func ReclaimEvictions() []Query {
	perMinute := func(result string) string {
		return fmt.Sprintf("sum by (resource) (rate(%s{result=%q}[%s])) * 60", metrics.NameReclaimEvictions, result, rateInterval)
	}
	return []Query{
		{Expr: perMinute(metrics.EvictionEvicted), Legend: "evicted for {{resource}}"},
		{Expr: perMinute(metrics.EvictionRefused), Legend: "refused for {{resource}}"},
	}
}

// dashed draws a series as a dashed line without fill.
func dashed() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{
		{Id: "custom.fillOpacity", Value: 0},
		{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
	}
}

// boundLines draws the named series as dashed lines without fill: the
// bounds (requests, published capacity) the filled use is read against.
func boundLines(panel *timeseries.PanelBuilder, names ...string) *timeseries.PanelBuilder {
	for _, n := range names {
		panel.OverrideByName(n, dashed())
	}
	return panel
}

// boundQueries is boundLines for every series of the queries of the
// refIDs given, whose names vary (one per workload or node).
func boundQueries(panel *timeseries.PanelBuilder, refIDs ...string) *timeseries.PanelBuilder {
	for _, r := range refIDs {
		panel.OverrideByQuery(r, dashed())
	}
	return panel
}

// reclaimedCPUPanel: the gap between online requested and online used is
// the idle CPU; reclaimable is what backfill offers of it.
func reclaimedCPUPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	panel := timeSeriesPanel(id, "CPU: online requested, online used, reclaimable, offline used",
		"Cores, summed over all nodes: what online pods request and really use, the reclaimed capacity the nodes publish for offline pods "+
			"(backfill.dev/batch-cpu: allocatable less a margin, system use, the online peak and offline pods on plain requests), "+
			"and what offline pods use. The gap between online requested and online used is the idle CPU; reclaimable is how much of it backfill offers; "+
			"offline used is how much training takes.",
		UnitCores, pos, ReclaimedCPU()).
		FillOpacity(10).
		Min(0)
	return boundLines(panel, "online requested", "reclaimable")
}

// reclaimedMemoryPanel is reclaimedCPUPanel for memory, with what offline
// pods hold.
func reclaimedMemoryPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	panel := timeSeriesPanel(id, "Memory: online requested, online used, reclaimable, offline holds, offline used",
		"Bytes, summed over all nodes: what online pods request and their working set, the reclaimed memory the nodes publish for offline pods "+
			"(backfill.dev/batch-memory), what offline pods hold of it (their batch requests) and their working set. "+
			"Memory cannot be throttled: when online use rises into what offline pods hold, the manager evicts them.",
		UnitBytes, pos, ReclaimedMemory()).
		FillOpacity(10).
		Min(0)
	return boundLines(panel, "online requested", "reclaimable", "offline holds")
}

// evictionsPanel shows the evictions for online protection over the
// dashboard's time range.
func evictionsPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "Evictions for online protection",
		"Offline pods the manager evicted per minute because online use rose into the reclaimed capacity they held, by the resource short "+
			"(backfill_reclaim_evictions_total), and evictions the Eviction API refused (a PodDisruptionBudget). "+
			"Each eviction is also a ReclaimedForOnline disruption of its TFJob. Evictions that keep coming mean the reclaimed capacity sits too close "+
			"to online use: raise --reclaim-cpu-margin, --reclaim-memory-margin or --reclaim-window.",
		UnitPerMinute, pos, ReclaimEvictions()).
		DrawStyle(common.GraphDrawStyleBars).
		FillOpacity(60).
		Min(0)
}
