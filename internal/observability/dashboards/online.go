package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// The cockpit's row on the online pods' own word: the P99 of each
// workload that declares an objective (pod template annotation
// backfill.dev/latency-objective) against it, the same P99 on nodes with
// and without offline pods, how long online pods wait for a CPU, and the
// nodes whose reclaimed capacity the manager holds back while they suffer.

// OnlineRowTitle is the title of the cockpit's online latency row.
const OnlineRowTitle = "Is co-location hurting online?"

// topPressure is how many nodes of each kind the CPU pressure panel
// shows, the most waiting first.
const topPressure = 10

// OnlineLatency are the queries of the P99 panel: each opted-in
// workload's P99 over all its pods, and its objective.
func OnlineLatency() []Query {
	return []Query{
		{Expr: expr.OnlineLatencyP99(expr.PeersAll, ""), Legend: "{{namespace}}/{{workload}} P99"},
		{Expr: expr.OnlineLatencyObjective(""), Legend: "{{namespace}}/{{workload}} objective"},
	}
}

// OnlineLatencyByPeers are the queries of the peers panel: each opted-in
// workload's P99 on nodes where offline pods run, and on the others.
func OnlineLatencyByPeers() []Query {
	return []Query{
		{Expr: expr.OnlineLatencyP99(expr.PeersWithOffline, ""), Legend: "{{namespace}}/{{workload}} beside offline pods"},
		{Expr: expr.OnlineLatencyP99(expr.PeersWithoutOffline, ""), Legend: "{{namespace}}/{{workload}} without offline pods"},
	}
}

// OnlineCPUPressure are the queries of the CPU pressure panel: how long
// the online pods of each node waited for a CPU together, on the nodes
// with offline pods and on the others, the most waiting of each.
func OnlineCPUPressure() []Query {
	wait := expr.OnlineCPUPressureByNodeOver(rateInterval, "")
	top := func(join string) string {
		return fmt.Sprintf("topk(%d, (%s) %s on (node) %s)", topPressure, wait, join, expr.NodesWithOfflineWork())
	}
	return []Query{
		{Expr: top("and"), Legend: "{{node}} with offline pods"},
		{Expr: top("unless"), Legend: "{{node}} without offline pods"},
	}
}

// OnlineHolds are the queries of the held nodes panel: how many nodes the
// online signal holds back, by signal; 0 rather than nothing while none
// is held.
func OnlineHolds() []Query {
	held := func(signal string) string {
		return fmt.Sprintf("count(%s) or vector(0)", expr.NodesHeldByOnlineSignal(fmt.Sprintf("signal=%q", signal)))
	}
	return []Query{
		{Expr: held(expr.OnlineSignalLatency), Legend: "held for latency"},
		{Expr: held(expr.OnlineSignalCPUWait), Legend: "held for CPU wait"},
	}
}

// OnlineActions are the queries of the actions panel, per minute over the
// cluster: holds begun, steps given back by evicting, holds released. The
// manager exports each action's counter from its start, at 0.
func OnlineActions() []Query {
	perMinute := func(action string) string {
		return expr.OnlineActionsOver(action, rateInterval) + " * 60"
	}
	return []Query{
		{Expr: perMinute(expr.OnlineActionHold), Legend: "holds begun"},
		{Expr: perMinute(expr.OnlineActionGiveBack), Legend: "steps given back"},
		{Expr: perMinute(expr.OnlineActionRelease), Legend: "holds released"},
	}
}

// onlineRow opens the row; its panels follow it on the grid.
func onlineRow(id uint32, y uint32) *dashboard.RowBuilder {
	return dashboard.NewRowBuilder(OnlineRowTitle).Id(id).GridPos(grid(0, y, 24, 1)).Collapsed(false)
}

// onlineLatencyPanel: each workload's P99 with its objective dashed.
func onlineLatencyPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	panel := timeSeriesPanel(id, "P99 latency against the objective, per workload",
		"Each online workload that declares a P99 objective (pod template annotation backfill.dev/latency-objective): "+
			"the P99 the manager computes from the workload's own request duration histogram over all its pods every reclaim interval "+
			"(backfill_online_latency_p99_seconds{peers=\"all\"}), and the objective, dashed (backfill_online_latency_objective_seconds). "+
			"A workload without requests in the window has no P99. Above the objective on nodes with offline pods, the manager holds those nodes back.",
		UnitSeconds, pos, OnlineLatency()).
		Min(0)
	return boundQueries(panel, "B")
}

// onlinePeersPanel: the same P99 beside offline pods and without them.
func onlinePeersPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	panel := timeSeriesPanel(id, "P99 latency beside offline pods and without them, per workload",
		"Each opted-in workload's P99 over its pods on nodes where offline pods run, and over its pods on the other nodes, dashed "+
			"(backfill_online_latency_p99_seconds, peers with_offline and without_offline): the gap is what co-location costs it. "+
			"Both high means the workload is slow whoever runs beside it; only beside offline pods means training interferes. "+
			"A line is missing while none of that group's pods served requests. BackfillOnlineObjectiveMissed fires on the first above the objective for 10 minutes.",
		UnitSeconds, pos, OnlineLatencyByPeers()).
		Min(0)
	return boundQueries(panel, "B")
}

// onlinePressurePanel: how long online pods wait for a CPU, per node.
func onlinePressurePanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	panel := timeSeriesPanel(id, fmt.Sprintf("Online pods waiting for CPU, per node (top %d of each)", topPressure),
		"Seconds per second that the online pods of a node waited, runnable, for a CPU, summed over them, each pod's wait the time at least one of its threads waited: "+
			"the node agent's measure (backfill_node_agent_online_cpu_wait_seconds_total) where it reports the node, else the kubelet's CPU pressure of every container that is not offline "+
			"(container_pressure_cpu_waiting_seconds_total: cgroup v2, and the KubeletPSI feature gate before Kubernetes 1.34), summed over a pod's containers. "+
			fmt.Sprintf("The %d nodes with offline pods that wait most, and, dashed, the %d without. ", topPressure, topPressure)+
			"Above the manager's --reclaim-online-cpu-wait (0.1 s/s by default) on a node with offline pods, the manager holds the node back.",
		UnitSecondsPerSecond, pos, OnlineCPUPressure()).
		Min(0)
	return boundQueries(panel, "B")
}

// onlineHeldPanel: how many nodes the online signal holds back.
func onlineHeldPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "Nodes held back by the online signal",
		"Nodes whose reclaimed capacity the manager holds back because their online pods suffer while offline pods run there (backfill_reclaim_node_online_hold), "+
			"by signal: a workload's P99 above its objective (latency), or online pods waiting for a CPU (CPU wait). A held node does not grow and offers no room to new offline pods; "+
			"while the harm lasts past --reclaim-online-evict-after it gives back reclaimed CPU a step at a time by evicting offline pods, and it grows again once the signal "+
			"has been healthy for --reclaim-online-recover-after. `backfill doctor` (check online-signal) and `backfill describe node` name the nodes, why, and what comes next.",
		UnitCount, pos, OnlineHolds()).
		Min(0)
}

// onlineActionsPanel: what the online signal did, per minute.
func onlineActionsPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "Online protection: holds and steps given back",
		"Per minute over the cluster (backfill_reclaim_online_actions_total): holds begun (a node stopped growing for its online pods), "+
			"steps given back (a held node evicted offline pods to give back --reclaim-online-step percent of its CPU), "+
			"and holds released (the signal healthy for --reclaim-online-recover-after). Steps that keep coming mean training keeps hurting online pods on those nodes.",
		UnitPerMinute, pos, OnlineActions()).
		DrawStyle(common.GraphDrawStyleBars).
		FillOpacity(60).
		Min(0)
}
