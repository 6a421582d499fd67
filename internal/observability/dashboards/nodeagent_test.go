package dashboards

import (
	"testing"

	"github.com/prometheus/prometheus/promql/promqltest"
)

// agentCluster is the node agents of node-0 and node-1 as Prometheus
// stores them, scraped by the chart's PodMonitor (node from the pod's
// node, the agent's own namespace and pod, the online pod's on the wait
// series). node-0's agent caps offline pods at 3 cores, which use 2 beside
// 1.5 online and 0.5 system, throttled 0.4 s/s; its online pods waited
// 0.2 (web-0) and 0.1 (web-1) s/s for a CPU; one eviction a minute.
// node-1's agent sets no ceiling; its online pod db-0 waited 0.05 s/s.
const agentCluster = `
load 15s
  backfill_node_agent_offline_cpu_ceiling_cores{node="node-0",namespace="backfill-node-agent",pod="agent-a"} 3x40
  backfill_node_agent_offline_cpu_ceiling_cores{node="node-1",namespace="backfill-node-agent",pod="agent-b"} -1x40
  backfill_node_agent_cpu_used_cores{tier="online",node="node-0",namespace="backfill-node-agent",pod="agent-a"} 1.5x40
  backfill_node_agent_cpu_used_cores{tier="offline",node="node-0",namespace="backfill-node-agent",pod="agent-a"} 2x40
  backfill_node_agent_cpu_used_cores{tier="system",node="node-0",namespace="backfill-node-agent",pod="agent-a"} 0.5x40
  backfill_node_agent_cpu_used_cores{tier="online",node="node-1",namespace="backfill-node-agent",pod="agent-b"} 4x40
  backfill_node_agent_offline_cpu_throttled_seconds_total{node="node-0",namespace="backfill-node-agent",pod="agent-a"} 0+6x40
  backfill_node_agent_offline_cpu_throttled_seconds_total{node="node-1",namespace="backfill-node-agent",pod="agent-b"} 0x40
  backfill_node_agent_online_cpu_wait_seconds_total{node="node-0",namespace="shop",pod="web-0",instance="10.0.0.1:8080"} 0+3x40
  backfill_node_agent_online_cpu_wait_seconds_total{node="node-0",namespace="shop",pod="web-1",instance="10.0.0.1:8080"} 0+1.5x40
  backfill_node_agent_online_cpu_wait_seconds_total{node="node-1",namespace="shop",pod="db-0",instance="10.0.0.2:8080"} 0+0.75x40
  backfill_node_agent_memory_evictions_total{node="node-0",result="evicted",namespace="backfill-node-agent",pod="agent-a"} 0+0.25x40
  backfill_node_agent_memory_evictions_total{node="node-0",result="refused",namespace="backfill-node-agent",pod="agent-a"} 0x40
`

// asNodes substitutes the variables as Grafana would with the node
// variable set to nodes, at a 15s scrape.
func asNodes(query, nodes string) string {
	return Substitute(query, map[string]string{VarNode: nodes, "__rate_interval": "1m"})
}

// TestNodeAgentQueries evaluates the node agent panels' queries: one
// node's panel shows that node only, a node without a ceiling draws
// none, the wait panel ranks pods over the nodes chosen.
func TestNodeAgentQueries(t *testing.T) {
	cpu := NodeAgentCPU()
	promqltest.RunTest(t, agentCluster+`
eval instant at 5m `+asNodes(cpu[0].Expr, "node-0")+`
  {node="node-0"} 3

eval instant at 5m `+asNodes(cpu[0].Expr, "node-1")+`

eval instant at 5m `+asNodes(cpu[1].Expr, "node-0")+`
  {node="node-0"} 2

eval instant at 5m `+asNodes(cpu[2].Expr, "node-0")+`
  {node="node-0"} 1.5

eval instant at 5m `+asNodes(cpu[3].Expr, "node-0")+`
  {node="node-0"} 0.5

eval instant at 5m `+asNodes(OnlineCPUWait().Expr, AllValue)+`
  {node="node-0",namespace="shop",pod="web-0"} 0.2
  {node="node-0",namespace="shop",pod="web-1"} 0.1
  {node="node-1",namespace="shop",pod="db-0"} 0.05

eval instant at 5m `+asNodes(OnlineCPUWait().Expr, "node-1")+`
  {node="node-1",namespace="shop",pod="db-0"} 0.05

eval instant at 5m `+asNodes(OfflineThrottled().Expr, AllValue)+`
  {node="node-0"} 0.4
  {node="node-1"} 0

eval instant at 5m `+asNodes(NodeAgentEvictions()[0].Expr, AllValue)+`
  {node="node-0"} 1

eval instant at 5m `+asNodes(NodeAgentEvictions()[1].Expr, AllValue)+`
  {node="node-0"} 0
`, promqltest.NewTestEngine(t, false, 0, 10000))
}
