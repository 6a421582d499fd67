package rules

import (
	"fmt"
	"time"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// Thresholds of the node agent's alerts, as docs/observability.md states
// them.
const (
	// OnlineCPUWaitPerSecond seconds per second that a node's online pods
	// wait for a CPU together, with more than OfflineCPUBeside cores of
	// offline use on the node, for OnlineCPUWaitFor, is interference: a
	// tenth of a second each second, summed over the pods, is well above
	// what online pods alone on a node with idle CPUs wait.
	OnlineCPUWaitPerSecond = 0.1
	OfflineCPUBeside       = 0.1
	OnlineCPUWaitFor       = 5 * time.Minute
	// NodeAgentMissingFor is how long a node may run offline pods on
	// reclaimed capacity without an agent reporting: longer than a rolling
	// update of the DaemonSet (one node at a time) or a scrape or two lost.
	NodeAgentMissingFor = 10 * time.Minute
)

// labelAssumption is what both alerts assume of the agent's series.
const labelAssumption = "(The agent's series must carry the label node, which the chart's PodMonitor and ServiceMonitor set from __meta_kubernetes_pod_node_name.)"

// onlinePodsWaitForCPU: online pods on a node wait for a CPU while offline
// pods use CPU beside them, as the node agent measures both. The wait is
// summed over the node's online pods: one pod waiting a little is noise,
// many pods waiting a little is the node's latency.
func onlinePodsWaitForCPU() Alert {
	return Alert{
		Name: "BackfillOnlinePodsWaitForCPU",
		Expr: fmt.Sprintf("(%s > %v) and on (node) (%s > %v)",
			expr.OnlineCPUWaitByNodeOver(expr.DefaultRateWindow, ""), OnlineCPUWaitPerSecond,
			expr.NodeAgentCPUUsedByNode(expr.NodeAgentTierOffline, ""), OfflineCPUBeside),
		For:      OnlineCPUWaitFor,
		Severity: SeverityWarning,
		// Online services harmed: their pods wait for CPU beside training.
		Profile: ProfileEssential,
		Summary: "Online pods on node {{ $labels.node }} wait for CPU while offline pods run beside them",
		Description: "Online pods on node {{ $labels.node }} have waited {{ $value | printf \"%.2f\" }} s per second for a CPU together " +
			fmt.Sprintf("(more than %v) for %s while offline pods used more than %v cores there: ", OnlineCPUWaitPerSecond, words(OnlineCPUWaitFor), OfflineCPUBeside) +
			"training delays online requests. The node agent's ceiling leaves online pods too little room (lower --cpu-threshold or --cpu-floor), " +
			"or online pods lack CPU of their own. " + labelAssumption,
	}
}

// nodeAgentMissing: the manager says offline pods on a node hold
// reclaimed capacity, and no node agent reports from that node. A node
// agent that died leaves its last ceiling in place (training slowed,
// online safe), but nothing follows online use any more.
func nodeAgentMissing() Alert {
	return Alert{
		Name:     "BackfillNodeAgentMissing",
		Expr:     fmt.Sprintf("%s unless on (node) %s", expr.NodesOnReclaimedCapacity(), expr.NodesWithNodeAgent()),
		For:      NodeAgentMissingFor,
		Severity: SeverityWarning,
		// Nothing protects the node's online pods within a second.
		Profile: ProfileEssential,
		Summary: "No node agent reports from node {{ $labels.node }}, which runs offline pods on reclaimed capacity",
		Description: "Offline pods on node {{ $labels.node }} hold reclaimed capacity (backfill_node_batch_allocated), and no node agent has reported from it for " +
			words(NodeAgentMissingFor) + " (no backfill_node_agent_cpu_used_cores with that node): nothing holds their CPU back within a second when online pods need it, " +
			"and memory shortages wait for the manager's slower evictions. The agent is not installed, not scheduled on the node, not ready, or not scraped. " +
			labelAssumption,
	}
}
