package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fromAgent is a series of the node agent on node (promqltest's load
// syntax) with the labels the chart's PodMonitor gives it: node from the
// pod's node, job, instance, and, unless the series has its own (the
// online pod's, kept by honorLabels: true), the agent's namespace and pod.
func fromAgent(metric, labels, node, values string) string {
	target := []string{`node="` + node + `"`, `job="backfill-system/backfill-node-agent"`, `instance="10.0.0.5:8080"`, `container="node-agent"`, `endpoint="metrics"`}
	if !strings.Contains(labels, `pod="`) {
		target = append(target, `namespace="backfill-node-agent"`, `pod="backfill-node-agent-`+node+`"`)
	}
	if labels != "" {
		target = append([]string{labels}, target...)
	}
	return metric + "{" + strings.Join(target, ",") + "} " + values
}

// Series of the node agent's alerts; 200 samples at 15s cover 50 minutes.
const (
	waitMetric    = "backfill_node_agent_online_cpu_wait_seconds_total"
	usedMetric    = "backfill_node_agent_cpu_used_cores"
	offlineTier   = `tier="offline"`
	batchNode0CPU = `backfill_node_batch_allocated{node="node-0",resource="cpu"} 2x200`
	batchNode0Mem = `backfill_node_batch_allocated{node="node-0",resource="memory"} 4000000000x200`
	batchNode1CPU = `backfill_node_batch_allocated{node="node-1",resource="cpu"} 1x200`
	noBatchNode0  = `backfill_node_batch_allocated{node="node-0",resource="cpu"} 0x200`
	noBatchNode0M = `backfill_node_batch_allocated{node="node-0",resource="memory"} 0x200`
)

func TestNodeAgentAlerts(t *testing.T) {
	// 0.9 s of wait every 15s is 0.06 s/s: one pod alone is below 0.1,
	// two together above it.
	web0Waits := fromAgent(waitMetric, `namespace="shop",pod="web-0"`, "node-0", "0+0.9x200")
	web1Waits := fromAgent(waitMetric, `namespace="shop",pod="web-1"`, "node-0", "0+0.9x200")
	offlineBusy := fromAgent(usedMetric, offlineTier, "node-0", "2x200")
	offlineHeld := fromAgent(usedMetric, offlineTier, "node-0", "0x200")
	waiting := firing{
		Labels: map[string]string{"alertname": "BackfillOnlinePodsWaitForCPU", "severity": "warning", "node": "node-0"},
		Annotations: annotations("backfillonlinepodswaitforcpu", "Online pods on node node-0 wait for CPU while offline pods run beside them",
			"Online pods on node node-0 have waited 0.12 s per second for a CPU together (more than 0.1) for 5 minutes while offline pods used more than 0.1 cores there: "+
				"training delays online requests. The node agent's ceiling leaves online pods too little room (lower --cpu-threshold or --cpu-floor), "+
				"or online pods lack CPU of their own. "+labelAssumption),
	}
	missing := func(node string) firing {
		return firing{
			Labels: map[string]string{"alertname": "BackfillNodeAgentMissing", "severity": "warning", "node": node},
			Annotations: annotations("backfillnodeagentmissing", "No node agent reports from node "+node+", which runs offline pods on reclaimed capacity",
				"Offline pods on node "+node+" hold reclaimed capacity (backfill_node_batch_allocated), and no node agent has reported from it for 10 minutes "+
					"(no backfill_node_agent_cpu_used_cores with that node): nothing holds their CPU back within a second when online pods need it, "+
					"and memory shortages wait for the manager's slower evictions. The agent is not installed, not scheduled on the node, not ready, or not scraped. "+
					labelAssumption),
		}
	}

	cases := map[string]struct {
		series []string
		at     time.Duration
		alert  string
		want   []firing
	}{
		"two online pods wait 0.06 s/s each beside busy offline pods": {
			series: []string{web0Waits, web1Waits, offlineBusy},
			at:     15 * time.Minute, alert: "BackfillOnlinePodsWaitForCPU", want: []firing{waiting},
		},
		"one online pod waits 0.06 s/s: silent": {
			series: []string{web0Waits, offlineBusy},
			at:     15 * time.Minute, alert: "BackfillOnlinePodsWaitForCPU",
		},
		"online pods wait, offline pods held at 0: silent": {
			series: []string{web0Waits, web1Waits, offlineHeld},
			at:     15 * time.Minute, alert: "BackfillOnlinePodsWaitForCPU",
		},
		"online pods wait, offline pods on another node: silent": {
			series: []string{web0Waits, web1Waits, offlineHeld, fromAgent(usedMetric, offlineTier, "node-1", "2x200")},
			at:     15 * time.Minute, alert: "BackfillOnlinePodsWaitForCPU",
		},
		// Offline pods busy from minute 20: pending at 23, not firing.
		"waiting for 3 minutes only: silent": {
			series: []string{web0Waits, web1Waits, fromAgent(usedMetric, offlineTier, "node-0", "0x80 2x120")},
			at:     23 * time.Minute, alert: "BackfillOnlinePodsWaitForCPU",
		},
		"offline pods on reclaimed capacity, no agent on their node": {
			series: []string{
				scrapedByServiceMonitor(batchNode0CPU), scrapedByServiceMonitor(batchNode0Mem), scrapedByServiceMonitor(batchNode1CPU),
				fromAgent(usedMetric, offlineTier, "node-1", "1x200"),
			},
			at: 15 * time.Minute, alert: "BackfillNodeAgentMissing", want: []firing{missing("node-0")},
		},
		"an agent on every node with offline pods on reclaimed capacity: silent": {
			series: []string{batchNode0CPU, batchNode0Mem, batchNode1CPU, fromAgent(usedMetric, offlineTier, "node-0", "2x200"), fromAgent(usedMetric, offlineTier, "node-1", "1x200")},
			at:     15 * time.Minute, alert: "BackfillNodeAgentMissing",
		},
		"no offline pod holds reclaimed capacity, no agent: silent": {
			series: []string{noBatchNode0, noBatchNode0M},
			at:     15 * time.Minute, alert: "BackfillNodeAgentMissing",
		},
		// The agent's last sample at minute 20 is gone from minute 25.
		"agent gone for 15 minutes": {
			series: []string{batchNode0CPU, fromAgent(usedMetric, offlineTier, "node-0", "2x80")},
			at:     40 * time.Minute, alert: "BackfillNodeAgentMissing", want: []firing{missing("node-0")},
		},
		"agent gone for 5 minutes: silent": {
			series: []string{batchNode0CPU, fromAgent(usedMetric, offlineTier, "node-0", "2x80")},
			at:     30 * time.Minute, alert: "BackfillNodeAgentMissing",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := firingAt(t, tc.series, tc.at)
			if diff := cmp.Diff(tc.want, got[tc.alert]); diff != "" {
				t.Errorf("%s firing at %v (-want +got):\n%s", tc.alert, tc.at, diff)
			}
		})
	}
}
