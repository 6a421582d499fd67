package expr_test

import (
	"slices"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/nodeagent"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// TestNodeAgentMetricNames keeps the names the fragments read in step with
// what the node agent and the manager export. An external test: the agent
// imports packages that import expr.
func TestNodeAgentMetricNames(t *testing.T) {
	exported := nodeagent.MetricNames()
	for _, name := range []string{
		expr.MetricNodeAgentCeiling, expr.MetricNodeAgentCPUUsed, expr.MetricNodeAgentThrottled,
		expr.MetricNodeAgentEvictions, expr.MetricNodeAgentOnlineWait,
	} {
		if !slices.Contains(exported, name) {
			t.Errorf("fragments read %s, which the node agent does not export (it exports %v)", name, exported)
		}
	}
	if expr.MetricNodeBatchAllocated != metrics.NameNodeBatchAllocated {
		t.Errorf("fragments read %s, the manager exports %s", expr.MetricNodeBatchAllocated, metrics.NameNodeBatchAllocated)
	}
	if nodeagent.EvictionEvicted != metrics.EvictionEvicted || nodeagent.EvictionRefused != metrics.EvictionRefused {
		t.Errorf("the agent's eviction results %q, %q differ from the manager's %q, %q, which the queries of both use",
			nodeagent.EvictionEvicted, nodeagent.EvictionRefused, metrics.EvictionEvicted, metrics.EvictionRefused)
	}
}

// nodeAgents are two nodes' agents as Prometheus stores them, with the
// labels their PodMonitor adds (the agent's own namespace and pod; the
// online pod's on the wait series, honorLabels: true): node-0 caps offline
// pods at 3 cores, used 2 of them (1.5 online, 0.5 system) and throttled
// them 0.4 s/s; its online pods shop/web-0 and shop/web-1 waited 0.2 and
// 0.1 s/s for a CPU; one eviction a minute, none refused. node-1's agent
// sets no ceiling (-1). node-2 holds reclaimed memory and has no agent.
const nodeAgents = `
load 15s
  backfill_node_agent_offline_cpu_ceiling_cores{node="node-0",namespace="backfill-node-agent",pod="agent-a"} 3x40
  backfill_node_agent_offline_cpu_ceiling_cores{node="node-1",namespace="backfill-node-agent",pod="agent-b"} -1x40
  backfill_node_agent_cpu_used_cores{tier="online",node="node-0",namespace="backfill-node-agent",pod="agent-a"} 1.5x40
  backfill_node_agent_cpu_used_cores{tier="offline",node="node-0",namespace="backfill-node-agent",pod="agent-a"} 2x40
  backfill_node_agent_cpu_used_cores{tier="system",node="node-0",namespace="backfill-node-agent",pod="agent-a"} 0.5x40
  backfill_node_agent_cpu_used_cores{tier="offline",node="node-1",namespace="backfill-node-agent",pod="agent-b"} 0x40
  backfill_node_agent_offline_cpu_throttled_seconds_total{node="node-0",namespace="backfill-node-agent",pod="agent-a"} 0+6x40
  backfill_node_agent_online_cpu_wait_seconds_total{node="node-0",namespace="shop",pod="web-0"} 0+3x40
  backfill_node_agent_online_cpu_wait_seconds_total{node="node-0",namespace="shop",pod="web-1"} 0+1.5x40
  backfill_node_agent_memory_evictions_total{node="node-0",result="evicted",namespace="backfill-node-agent",pod="agent-a"} 0+0.25x40
  backfill_node_agent_memory_evictions_total{node="node-0",result="refused",namespace="backfill-node-agent",pod="agent-a"} 0x40
  backfill_node_batch_allocated{node="node-0",resource="cpu"} 2x40
  backfill_node_batch_allocated{node="node-1",resource="cpu"} 0x40
  backfill_node_batch_allocated{node="node-1",resource="memory"} 0x40
  backfill_node_batch_allocated{node="node-2",resource="cpu"} 0x40
  backfill_node_batch_allocated{node="node-2",resource="memory"} 1000000000x40
`

func TestNodeAgentFragments(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	selected := `node=~"node-0|node-1"`
	for name, e := range map[string]string{
		"NodeAgentCPUUsedByNode":       expr.NodeAgentCPUUsedByNode(expr.NodeAgentTierOffline, selected),
		"NodeAgentCeilingByNode":       expr.NodeAgentCeilingByNode(selected),
		"OfflineThrottledByNodeOver":   expr.OfflineThrottledByNodeOver("1m", selected),
		"OnlineCPUWaitByPodOver":       expr.OnlineCPUWaitByPodOver("1m", ""),
		"OnlineCPUWaitByNodeOver":      expr.OnlineCPUWaitByNodeOver("1m", ""),
		"NodeAgentEvictionsByNodeOver": expr.NodeAgentEvictionsByNodeOver(metrics.EvictionEvicted, "1m", selected),
		"NodesWithNodeAgent":           expr.NodesWithNodeAgent(),
		"NodesOnReclaimedCapacity":     expr.NodesOnReclaimedCapacity(),
	} {
		if _, err := p.ParseExpr(e); err != nil {
			t.Errorf("%s does not parse: %v\n%s", name, err, e)
		}
	}

	promqltest.RunTest(t, nodeAgents+`
eval instant at 5m `+expr.NodeAgentCPUUsedByNode(expr.NodeAgentTierOffline, "")+`
  {node="node-0"} 2
  {node="node-1"} 0

eval instant at 5m `+expr.NodeAgentCPUUsedByNode(expr.NodeAgentTierSystem, `node=~"node-0"`)+`
  {node="node-0"} 0.5

# node-1 sets no ceiling: no series rather than -1.
eval instant at 5m `+expr.NodeAgentCeilingByNode("")+`
  {node="node-0"} 3

eval instant at 5m `+expr.OfflineThrottledByNodeOver("1m", "")+`
  {node="node-0"} 0.4

eval instant at 5m `+expr.OnlineCPUWaitByPodOver("1m", "")+`
  {node="node-0",namespace="shop",pod="web-0"} 0.2
  {node="node-0",namespace="shop",pod="web-1"} 0.1

eval instant at 5m `+expr.OnlineCPUWaitByNodeOver("1m", "")+`
  {node="node-0"} 0.3

eval instant at 5m `+expr.NodeAgentEvictionsByNodeOver(metrics.EvictionEvicted, "1m", "")+` * 60
  {node="node-0"} 1

eval instant at 5m `+expr.NodesWithNodeAgent()+`
  {node="node-0"} 1
  {node="node-1"} 1

# node-1 holds nothing; node-2 holds memory.
eval instant at 5m `+expr.NodesOnReclaimedCapacity()+`
  {node="node-0"} 1
  {node="node-2"} 1
`, promqltest.NewTestEngine(t, false, 0, 10000))
}
