package rules

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Series of the online latency alert, as the manager exports them: shop/web
// declares a P99 of 200 ms; 200 samples at 15s cover 50 minutes.
const (
	webObjective = `backfill_online_latency_objective_seconds{namespace="shop",workload="web"} 0.2x200`
	// webBeside and webApart are its P99 over its pods on nodes with
	// offline pods and on the others, at the values given.
	webBeside = `backfill_online_latency_p99_seconds{namespace="shop",workload="web",peers="with_offline"} %s`
	webApart  = `backfill_online_latency_p99_seconds{namespace="shop",workload="web",peers="without_offline"} %s`
)

func TestOnlineAlerts(t *testing.T) {
	missed := firing{
		Labels: map[string]string{"alertname": "BackfillOnlineObjectiveMissed", "severity": "critical", "namespace": "shop", "workload": "web"},
		Annotations: annotations("backfillonlineobjectivemissed", "Workload shop/web misses its P99 objective beside offline pods",
			"The P99 latency of workload shop/web over its pods on nodes where offline pods run has been above the objective it declares "+
				"(backfill.dev/latency-objective) for 10 minutes (now 300ms). backfill holds those nodes back: they do not grow and offer no room to new offline pods, "+
				"and while the miss lasts they give reclaimed CPU back a step at a time by evicting offline pods "+
				"(--reclaim-online-step after --reclaim-online-evict-after, one step per cool-down). "+
				"Compare its P99 on nodes without offline pods (the cockpit's row Is co-location hurting online?): if that misses too, the workload is slow by itself "+
				"(its objective is too tight, or it needs CPU of its own); if not, keep offline work further from it: lower the node agent's --cpu-threshold, "+
				"raise --reclaim-cpu-margin, or keep offline pods off its nodes."),
	}

	cases := map[string]struct {
		series []string
		at     time.Duration
		want   []firing
	}{
		"P99 beside offline pods above the objective": {
			series: []string{webObjective, sprintf(webBeside, "0.3x200"), sprintf(webApart, "0.15x200")},
			at:     15 * time.Minute, want: []firing{missed},
		},
		"manager scraped by a ServiceMonitor": {
			series: []string{scrapedByServiceMonitor(webObjective), scrapedByServiceMonitor(sprintf(webBeside, "0.3x200"))},
			at:     15 * time.Minute, want: []firing{missed},
		},
		"only the pods without offline pods beside miss: silent": {
			series: []string{webObjective, sprintf(webBeside, "0.15x200"), sprintf(webApart, "0.3x200")},
			at:     15 * time.Minute,
		},
		"below the objective: silent": {
			series: []string{webObjective, sprintf(webBeside, "0.19x200"), sprintf(webApart, "0.15x200")},
			at:     40 * time.Minute,
		},
		// Above from minute 10: not yet for 10 minutes at minute 15.
		"above for 5 minutes: silent": {
			series: []string{webObjective, sprintf(webBeside, "0.15x40 0.3x160")},
			at:     15 * time.Minute,
		},
		// None of its pods beside offline pods served requests: no
		// with_offline series, nothing to judge.
		"no requests beside offline pods: silent": {
			series: []string{webObjective, sprintf(webApart, "0.3x200")},
			at:     40 * time.Minute,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := firingAt(t, tc.series, tc.at)
			if diff := cmp.Diff(tc.want, got["BackfillOnlineObjectiveMissed"]); diff != "" {
				t.Errorf("BackfillOnlineObjectiveMissed firing at %v (-want +got):\n%s", tc.at, diff)
			}
		})
	}
}
