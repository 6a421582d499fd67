package expr

import (
	"fmt"
	"slices"
	"strings"
)

// The node agent's metrics (internal/nodeagent, `backfill node-agent`), one
// agent per node. They carry no node label of their own: the scrape adds
// it, as the chart's PodMonitor and ServiceMonitor (and
// config/monitoring's) do by relabelling __meta_kubernetes_pod_node_name to
// node. The online pods' wait keeps the pod's own namespace and pod only
// with honorLabels: true, which those monitors set.
const (
	// MetricNodeAgentCeiling is the CPU in cores the agent lets offline pods
	// use together, -1 while it sets none.
	MetricNodeAgentCeiling = "backfill_node_agent_offline_cpu_ceiling_cores"
	// MetricNodeAgentCPUUsed is the CPU in cores used over the agent's last
	// tick, by tier: online, offline and system.
	MetricNodeAgentCPUUsed = "backfill_node_agent_cpu_used_cores"
	// MetricNodeAgentThrottled is the time offline pods spent throttled by
	// their ceiling, summed over pods.
	MetricNodeAgentThrottled = "backfill_node_agent_offline_cpu_throttled_seconds_total"
	// MetricNodeAgentEvictions are the offline pods the agent asked to
	// evict for memory, by result.
	MetricNodeAgentEvictions = "backfill_node_agent_memory_evictions_total"
	// MetricNodeAgentOnlineWait is the time an online pod's threads waited,
	// runnable, for a CPU, by namespace and pod: the interference signal.
	MetricNodeAgentOnlineWait = "backfill_node_agent_online_cpu_wait_seconds_total"
	// MetricNodeBatchAllocated is the manager's reclaimed capacity that the
	// offline pods of a node hold, by node and resource.
	MetricNodeBatchAllocated = "backfill_node_batch_allocated"
)

// The tier label values of MetricNodeAgentCPUUsed.
const (
	NodeAgentTierOnline  = "online"
	NodeAgentTierOffline = "offline"
	// NodeAgentTierSystem is what the node uses beyond its pods.
	NodeAgentTierSystem = "system"
)

// selector is metric with the matchers given, each like `node=~"$node"`;
// empty ones are left out.
func selector(metric string, matchers ...string) string {
	kept := slices.DeleteFunc(slices.Clone(matchers), func(m string) bool { return m == "" })
	if len(kept) == 0 {
		return metric
	}
	return metric + "{" + strings.Join(kept, ",") + "}"
}

// NodeAgentCPUUsedByNode is the CPU in cores a tier (NodeAgentTier…) used
// on each node over the agent's last tick, labelled node, of the series
// matchers selects (empty for all). max, not sum: one agent reports per
// node, and the max drops the labels of its scrape target.
func NodeAgentCPUUsedByNode(tier, matchers string) string {
	return "max by (node) (" + selector(MetricNodeAgentCPUUsed, fmt.Sprintf("tier=%q", tier), matchers) + ")"
}

// NodeAgentCeilingByNode is the offline CPU ceiling in cores the agent of
// each node sets, labelled node; nodes whose agent sets none (-1) have no
// series.
func NodeAgentCeilingByNode(matchers string) string {
	return "max by (node) (" + selector(MetricNodeAgentCeiling, matchers) + ") >= 0"
}

// OfflineThrottledByNodeOver is the time offline pods spent throttled by
// the agent's ceiling on each node, in seconds per second summed over
// pods, labelled node, over a rate window of the caller's.
func OfflineThrottledByNodeOver(window, matchers string) string {
	return fmt.Sprintf("sum by (node) (rate(%s[%s]))", selector(MetricNodeAgentThrottled, matchers), window)
}

// OnlineCPUWaitByPodOver is how long each online pod's threads waited for
// a CPU, in seconds per second, labelled node, namespace and pod, over a
// rate window of the caller's.
func OnlineCPUWaitByPodOver(window, matchers string) string {
	return fmt.Sprintf("sum by (node, namespace, pod) (rate(%s[%s]))", selector(MetricNodeAgentOnlineWait, matchers), window)
}

// OnlineCPUWaitByNodeOver is OnlineCPUWaitByPodOver summed over the online
// pods of each node, labelled node.
func OnlineCPUWaitByNodeOver(window, matchers string) string {
	return fmt.Sprintf("sum by (node) (rate(%s[%s]))", selector(MetricNodeAgentOnlineWait, matchers), window)
}

// NodeAgentEvictionsByNodeOver are the offline pods the agent of each node
// asked to evict for memory, per second, of one result (evicted or
// refused), labelled node, over a rate window of the caller's.
func NodeAgentEvictionsByNodeOver(result, window, matchers string) string {
	return fmt.Sprintf("sum by (node) (rate(%s[%s]))", selector(MetricNodeAgentEvictions, fmt.Sprintf("result=%q", result), matchers), window)
}

// NodesWithNodeAgent is 1 per node whose agent reports, labelled node.
func NodesWithNodeAgent() string {
	return "group by (node) (" + MetricNodeAgentCPUUsed + ")"
}

// NodesOnReclaimedCapacity is 1 per node where offline pods hold some of
// the reclaimed capacity (backfill.dev/batch-cpu or batch-memory),
// labelled node: the nodes a node agent must protect.
func NodesOnReclaimedCapacity() string {
	return "group by (node) (" + MetricNodeBatchAllocated + " > 0)"
}
