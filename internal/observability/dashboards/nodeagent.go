package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// The cockpit's picture of the node agent (`backfill node-agent`): the
// offline CPU ceiling it sets on each node against what online pods,
// offline pods and the system use, how long the ceiling throttles offline
// pods, how long online pods wait for a CPU (the interference the ceiling
// is there to keep low), and its memory evictions. Its metrics name the
// node by the label their scrape adds (package expr).

// nodeSelected scopes a node agent series to the nodes the node variable
// selects.
const nodeSelected = `node=~"$` + VarNode + `"`

// nodeAgentScope says what the cockpit's node variable filters.
const nodeAgentScope = "Narrows only the node agent panels to these nodes (those whose agent reports). " +
	"The CPU panel repeats once per node chosen."

// topWaiting is how many online pods the wait panel shows, the most
// waiting first.
const topWaiting = 10

// nodeVariable offers the nodes whose agent reports.
func nodeVariable() *dashboard.QueryVariableBuilder {
	return multiVariable(VarNode, "node", expr.MetricNodeAgentCPUUsed).
		Label("Node (node agent panels)").
		Description(nodeAgentScope)
}

// NodeAgentCPU are the queries of the per-node CPU panel of the node
// agent: the offline ceiling it sets and what each tier used, in cores.
func NodeAgentCPU() []Query {
	return []Query{
		{Expr: expr.NodeAgentCeilingByNode(nodeSelected), Legend: "offline ceiling"},
		{Expr: expr.NodeAgentCPUUsedByNode(expr.NodeAgentTierOffline, nodeSelected), Legend: "offline used"},
		{Expr: expr.NodeAgentCPUUsedByNode(expr.NodeAgentTierOnline, nodeSelected), Legend: "online used"},
		{Expr: expr.NodeAgentCPUUsedByNode(expr.NodeAgentTierSystem, nodeSelected), Legend: "system used"},
	}
}

// OnlineCPUWait is the query of the interference panel: the online pods
// that waited longest for a CPU, in seconds per second.
func OnlineCPUWait() Query {
	return Query{
		Expr:   fmt.Sprintf("topk(%d, %s)", topWaiting, expr.OnlineCPUWaitByPodOver(rateInterval, nodeSelected)),
		Legend: "{{namespace}}/{{pod}} on {{node}}",
	}
}

// OfflineThrottled is the query of the throttling panel: per node, the
// time offline pods spent throttled by the ceiling, in seconds per second.
func OfflineThrottled() Query {
	return Query{Expr: expr.OfflineThrottledByNodeOver(rateInterval, nodeSelected), Legend: "{{node}}"}
}

// NodeAgentEvictions are the memory evictions the agents asked for per
// minute, by node: carried out, and refused by the Eviction API.
func NodeAgentEvictions() []Query {
	perMinute := func(result string) string {
		return expr.NodeAgentEvictionsByNodeOver(result, rateInterval, nodeSelected) + " * 60"
	}
	return []Query{
		{Expr: perMinute(metrics.EvictionEvicted), Legend: "evicted on {{node}}"},
		{Expr: perMinute(metrics.EvictionRefused), Legend: "refused on {{node}}"},
	}
}

// nodeAgentCPUPanel repeats per node chosen: use as lines, the ceiling
// dashed above offline use.
func nodeAgentCPUPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	panel := timeSeriesPanel(id, "Node agent on $"+VarNode+": offline CPU ceiling and CPU used",
		"Cores on one node, as its node agent measures them from the cgroups every second: the ceiling it sets on offline pods together "+
			"(backfill_node_agent_offline_cpu_ceiling_cores; none drawn while it sets none), and what offline pods, online pods and the system beyond pods used "+
			"(backfill_node_agent_cpu_used_cores). The ceiling is what online pods and the system leave below --cpu-threshold, never under --cpu-floor; "+
			"it drops at once when online use rises and grows by at most --cpu-growth percent of the node a tick. Offline used at the ceiling means the agent is holding training back. "+
			"One panel per node chosen in the Node variable.",
		UnitCores, pos, NodeAgentCPU()).
		Repeat(VarNode).
		RepeatDirection(dashboard.PanelRepeatDirectionH).
		MaxPerRow(3).
		Min(0)
	return boundLines(panel, "offline ceiling")
}

// onlineCPUWaitPanel is the interference signal of the online pods.
func onlineCPUWaitPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, fmt.Sprintf("Online pods waiting for CPU (top %d)", topWaiting),
		"Seconds per second during which at least one thread of an online pod waited, runnable, for a CPU (backfill_node_agent_online_cpu_wait_seconds_total: "+
			"the \"some\" of the pod's cpu.pressure on cgroup v2 and where v1 has a unified hierarchy, else an estimate from its threads' run-queue waits, at most 1 s/s): "+
			"the interference offline pods cause, and what the node agent's ceiling keeps low. "+
			fmt.Sprintf("The %d pods that waited most on the nodes chosen. ", topWaiting)+
			"BackfillOnlinePodsWaitForCPU fires when the pods of a node wait more than 0.1 s/s together while offline pods run there.",
		UnitSecondsPerSecond, pos, []Query{OnlineCPUWait()}).
		Min(0)
}

// offlineThrottledPanel shows how hard the ceiling holds offline pods.
func offlineThrottledPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "Offline CPU throttled by the node agent",
		"Seconds per second that offline pods spent throttled by the node agent's ceiling, summed over the pods of each node "+
			"(backfill_node_agent_offline_cpu_throttled_seconds_total). High while online pods are busy, as meant: training yields the CPU.",
		UnitSecondsPerSecond, pos, []Query{OfflineThrottled()}).
		Min(0)
}

// nodeAgentEvictionsPanel shows the agents' memory evictions.
func nodeAgentEvictionsPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "Memory evictions by the node agent",
		"Offline pods the node agent of each node asked to evict per minute because the node's memory in use passed --memory-threshold "+
			"(backfill_node_agent_memory_evictions_total), and evictions the Eviction API refused (a PodDisruptionBudget). "+
			"The manager's slower evictions are in Evictions for online protection.",
		UnitPerMinute, pos, NodeAgentEvictions()).
		DrawStyle(common.GraphDrawStyleBars).
		FillOpacity(60).
		Min(0)
}
