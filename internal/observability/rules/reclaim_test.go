package rules

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Series of the reclaimed-capacity alerts, as the manager exports them;
// 200 samples at 15s cover 50 minutes.
const (
	// 0.25 every 15s is one eviction a minute, ten in ten minutes.
	evictedForCPU     = `backfill_reclaim_evictions_total{resource="cpu",result="evicted"} 0+0.25x200`
	evictedForMemory  = `backfill_reclaim_evictions_total{resource="memory",result="evicted"} 0x200`
	refusedForCPU     = `backfill_reclaim_evictions_total{resource="cpu",result="refused"} 0+1x200`
	reclaimDisruption = `backfill_disruptions_total{reason="ReclaimedForOnline"} 0+0.25x200`
	metricsAPIUp      = `backfill_reclaim_usage_source_up{source="metrics-api"} 1x200`
	metricsAPIDown    = `backfill_reclaim_usage_source_up{source="metrics-api"} 0x200`
	node0Frozen       = `backfill_reclaim_node_frozen{node="node-0"} 1x200`
	node1Current      = `backfill_reclaim_node_frozen{node="node-1"} 0x200`
	node1Frozen       = `backfill_reclaim_node_frozen{node="node-1"} 1x200`
)

const usageStaleTail = " Frozen capacity does not grow, and no offline pod is evicted to protect online pods: a rise of online use goes unanswered."

func TestReclaimAlerts(t *testing.T) {
	storm := firing{
		Labels: map[string]string{"alertname": "BackfillReclaimEvictionStorm", "severity": "warning"},
		Annotations: annotations("backfillreclaimevictionstorm", "backfill keeps evicting offline pods to protect online pods",
			"The manager evicted 10 offline pods in the last 10 minutes because online use rose into the reclaimed capacity they held. "+
				"The reclaimed capacity is set too close to online use: training is started and evicted again and again."),
	}
	node0 := firing{
		Labels: map[string]string{"alertname": "BackfillReclaimUsageStale", "severity": "warning", "node": "node-0"},
		Annotations: annotations("backfillreclaimusagestale", "Reclaimed capacity of node node-0 is frozen",
			"Node node-0 has had no current usage for 10 minutes (its newest sample is older than --reclaim-stale-after, or missing): "+
				"its reclaimed capacity is frozen."+usageStaleTail),
	}
	sourceDown := firing{
		Labels: map[string]string{"alertname": "BackfillReclaimUsageStale", "severity": "warning", "source": "metrics-api"},
		Annotations: annotations("backfillreclaimusagestale", "backfill's usage source metrics-api is failing",
			"The manager's usage source metrics-api has failed its queries for 10 minutes: the reclaimed capacity of every node is frozen."+usageStaleTail),
	}

	cases := map[string]struct {
		series []string
		at     time.Duration
		alert  string
		want   []firing
	}{
		"one eviction for online protection a minute": {
			series: []string{evictedForCPU, evictedForMemory, reclaimDisruption},
			at:     20 * time.Minute, alert: "BackfillReclaimEvictionStorm", want: []firing{storm},
		},
		"evictions for online protection, manager scraped by a ServiceMonitor": {
			series: []string{scrapedByServiceMonitor(evictedForCPU), scrapedByServiceMonitor(evictedForMemory)},
			at:     20 * time.Minute, alert: "BackfillReclaimEvictionStorm", want: []firing{storm},
		},
		"one eviction every 5 minutes: silent": {
			series: []string{`backfill_reclaim_evictions_total{resource="cpu",result="evicted"} 0+0.05x200`, evictedForMemory},
			at:     40 * time.Minute, alert: "BackfillReclaimEvictionStorm",
		},
		"evictions refused by a PodDisruptionBudget only: silent": {
			series: []string{refusedForCPU, evictedForMemory},
			at:     20 * time.Minute, alert: "BackfillReclaimEvictionStorm",
		},
		// Two a minute from minute 10: more than 5 in the window from about
		// minute 13, not yet for 5 minutes at minute 15.
		"a storm that began minutes ago: silent until it lasts 5 minutes": {
			series: []string{`backfill_reclaim_evictions_total{resource="cpu",result="evicted"} 0x40 0+0.5x160`},
			at:     15 * time.Minute, alert: "BackfillReclaimEvictionStorm",
		},
		// The same storm, counted as disruptions too, is not reported a
		// second time as a disruption storm.
		"evictions for online protection as disruptions: no disruption storm": {
			series: []string{evictedForCPU, evictedForMemory, `backfill_disruptions_total{reason="ReclaimedForOnline"} 0+1x200`},
			at:     20 * time.Minute, alert: "BackfillOfflineDisruptionStorm",
		},
		"node frozen for 15 minutes": {
			series: []string{scrapedByServiceMonitor(node0Frozen), scrapedByServiceMonitor(node1Current), scrapedByServiceMonitor(metricsAPIUp)},
			at:     15 * time.Minute, alert: "BackfillReclaimUsageStale", want: []firing{node0},
		},
		"node frozen for 5 minutes: silent": {
			series: []string{`backfill_reclaim_node_frozen{node="node-0"} 0x40 1x160`, node1Current, metricsAPIUp},
			at:     15 * time.Minute, alert: "BackfillReclaimUsageStale",
		},
		"usage source down: one alert for the source, not one per node": {
			series: []string{node0Frozen, node1Frozen, metricsAPIDown},
			at:     15 * time.Minute, alert: "BackfillReclaimUsageStale", want: []firing{sourceDown},
		},
		"usage source down for 5 minutes: silent": {
			series: []string{`backfill_reclaim_usage_source_up{source="metrics-api"} 1x40 0x160`, node0Frozen, node1Frozen},
			at:     15 * time.Minute, alert: "BackfillReclaimUsageStale",
		},
		"usage current on every node: silent": {
			series: []string{`backfill_reclaim_node_frozen{node="node-0"} 0x200`, node1Current, metricsAPIUp},
			at:     40 * time.Minute, alert: "BackfillReclaimUsageStale",
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
