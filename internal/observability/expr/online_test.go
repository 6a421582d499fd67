package expr_test

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// onlineCluster is the manager's online series as Prometheus stores them:
// shop/web declares 200 ms and has a P99 of 250 ms, 300 ms on nodes with
// offline pods and 150 ms on the others; shop/api declares 500 ms and
// served requests on nodes without offline pods only (100 ms), its series
// scraped by a ServiceMonitor (the manager's pod and service added) from
// two replicas during a leader change. node-0 is held for latency, node-2
// for CPU wait; node-1 was held and is not. One hold a minute.
//
// The CPU wait: node-0's agent reports web-0 waiting 0.2 s/s, which wins
// over cAdvisor's series of the same pod; node-1 has no agent: cAdvisor's
// containers of online db-0 wait 0.05 s/s each, offline mnist-worker-0's
// 0.5 s/s are left out, as are the pod-level and pause series.
const onlineCluster = `
load 15s
  backfill_online_latency_objective_seconds{namespace="shop",workload="web"} 0.2x40
  backfill_online_latency_objective_seconds{namespace="shop",workload="api",pod="backfill-manager-a",service="backfill-manager-metrics"} 0.5x40
  backfill_online_latency_objective_seconds{namespace="shop",workload="api",pod="backfill-manager-b",service="backfill-manager-metrics"} 0.5x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="web",peers="all"} 0.25x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="web",peers="with_offline"} 0.3x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="web",peers="without_offline"} 0.15x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="api",peers="all",pod="backfill-manager-a",service="backfill-manager-metrics"} 0.1x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="api",peers="all",pod="backfill-manager-b",service="backfill-manager-metrics"} 0.1x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="api",peers="without_offline",pod="backfill-manager-a",service="backfill-manager-metrics"} 0.1x40
  backfill_reclaim_node_online_hold{node="node-0",signal="latency"} 1x40
  backfill_reclaim_node_online_hold{node="node-1",signal="cpu-wait"} 0x40
  backfill_reclaim_node_online_hold{node="node-2",signal="cpu-wait"} 1x40
  backfill_reclaim_online_actions_total{action="hold"} 0+0.25x40
  backfill_reclaim_online_actions_total{action="give_back"} 0x40
  backfill_node_agent_online_cpu_wait_seconds_total{node="node-0",namespace="shop",pod="web-0"} 0+3x40
  container_pressure_cpu_waiting_seconds_total{node="node-0",namespace="shop",pod="web-0",container="web"} 0+6x40
  container_pressure_cpu_waiting_seconds_total{node="node-1",namespace="shop",pod="db-0",container="db"} 0+0.75x40
  container_pressure_cpu_waiting_seconds_total{node="node-1",namespace="shop",pod="db-0",container="proxy"} 0+0.75x40
  container_pressure_cpu_waiting_seconds_total{node="node-1",namespace="shop",pod="db-0",container=""} 0+1.5x40
  container_pressure_cpu_waiting_seconds_total{node="node-1",namespace="shop",pod="db-0",container="POD"} 0+1.5x40
  container_pressure_cpu_waiting_seconds_total{node="node-1",namespace="team-a",pod="mnist-worker-0",container="tensorflow"} 0+7.5x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="node-1",tfjob="mnist",replica_type="worker"} 1x40
`

func TestOnlineFragments(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	for name, e := range map[string]string{
		"OnlineLatencyP99":            expr.OnlineLatencyP99(expr.PeersAll, `namespace="shop"`),
		"OnlineLatencyObjective":      expr.OnlineLatencyObjective(""),
		"OnlineObjectiveMissed":       expr.OnlineObjectiveMissed(expr.PeersWithOffline),
		"NodesHeldByOnlineSignal":     expr.NodesHeldByOnlineSignal(""),
		"OnlineActionsOver":           expr.OnlineActionsOver(expr.OnlineActionHold, "1m"),
		"OnlineCPUPressureByNodeOver": expr.OnlineCPUPressureByNodeOver("1m", `node=~"node-0|node-1"`),
	} {
		if _, err := p.ParseExpr(e); err != nil {
			t.Errorf("%s does not parse: %v\n%s", name, err, e)
		}
	}

	promqltest.RunTest(t, onlineCluster+`
eval instant at 5m `+expr.OnlineLatencyP99(expr.PeersAll, "")+`
  {namespace="shop",workload="web"} 0.25
  {namespace="shop",workload="api"} 0.1

# api's pods served nothing beside offline pods: no series.
eval instant at 5m `+expr.OnlineLatencyP99(expr.PeersWithOffline, "")+`
  {namespace="shop",workload="web"} 0.3

eval instant at 5m `+expr.OnlineLatencyObjective("")+`
  {namespace="shop",workload="web"} 0.2
  {namespace="shop",workload="api"} 0.5

# web misses beside offline pods and overall, not without them.
eval instant at 5m `+expr.OnlineObjectiveMissed(expr.PeersWithOffline)+`
  {namespace="shop",workload="web"} 0.3

eval instant at 5m `+expr.OnlineObjectiveMissed(expr.PeersAll)+`
  {namespace="shop",workload="web"} 0.25

eval instant at 5m `+expr.OnlineObjectiveMissed(expr.PeersWithoutOffline)+`

eval instant at 5m `+expr.NodesHeldByOnlineSignal("")+`
  {node="node-0",signal="latency"} 1
  {node="node-2",signal="cpu-wait"} 1

eval instant at 5m `+expr.NodesHeldByOnlineSignal(`signal="cpu-wait"`)+`
  {node="node-2",signal="cpu-wait"} 1

eval instant at 5m `+expr.OnlineActionsOver(expr.OnlineActionHold, "1m")+` * 60
  {} 1

eval instant at 5m `+expr.OnlineActionsOver(expr.OnlineActionGiveBack, "1m")+`
  {} 0

eval instant at 5m `+expr.OnlineCPUPressureByNodeOver("1m", "")+`
  {node="node-0"} 0.2
  {node="node-1"} 0.1

eval instant at 5m `+expr.OnlineCPUPressureByNodeOver("1m", `node=~"node-1"`)+`
  {node="node-1"} 0.1
`, promqltest.NewTestEngine(t, false, 0, 10000))
}
