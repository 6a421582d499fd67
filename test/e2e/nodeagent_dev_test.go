//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/observability/dashboards"
)

// checkNodeAgentPanels: the cockpit's node agent panels have data over the
// demo's day, once its peak has passed. The local cluster runs the node agent on every node over
// simulated cgroups (internal/devcluster/cgroupsim): from the start each
// reports its tiers' use and its online pods' waits; once online use on a
// CPU node passes the agent's activation it sets the offline ceiling
// there, which moves with online use, and the simulated kernel throttles
// the training held to it.
func checkNodeAgentPanels(t *testing.T, prom string) {
	t.Helper()
	values := map[string]string{dashboards.VarNode: dashboards.AllValue, "__rate_interval": "1m"}
	overDay := func(agg, query string) string {
		return fmt.Sprintf("%s(%s_over_time((%s)[%s:15s]))", agg, agg, dashboards.Substitute(query, values), dayWindow)
	}
	cpu := dashboards.NodeAgentCPU()
	panels := map[string]dashboards.Query{
		"online CPU wait":       dashboards.OnlineCPUWait(),
		"offline CPU throttled": dashboards.OfflineThrottled(),
	}
	var ceiling string
	for _, q := range cpu {
		panels["CPU panel: "+q.Legend] = q
		if q.Legend == "offline ceiling" {
			ceiling = q.Expr
		}
	}
	for what, q := range panels {
		pollValue(t, prom, "the node agent panel "+what+" to have data", "count("+overDay("max", q.Expr)+")", time.Minute,
			func(v float64) bool { return v >= 1 })
	}
	low, high := queryValue(t, prom, overDay("min", ceiling)), queryValue(t, prom, overDay("max", ceiling))
	// On a CPU node the ceiling is about 7 cores once online use passes the
	// agent's activation, and its floor, 1.6 cores, at the peak.
	if high-low < 4 {
		t.Errorf("The offline ceiling stayed within %.2f to %.2f cores over the day, want it to follow online use from the activation to the peak", low, high)
	}
	throttled := queryValue(t, prom, overDay("max", dashboards.OfflineThrottled().Expr))
	if throttled <= 0 {
		t.Errorf("Offline pods were never throttled by the ceiling over the day (up to %.2f s/s), want the ceiling to hold training back", throttled)
	}
	wait := queryValue(t, prom, overDay("max", dashboards.OnlineCPUWait().Expr))
	t.Logf("Node agents over the day: the offline ceiling from %.2f to %.2f cores, offline pods throttled up to %.2f s/s on a node, an online pod waiting up to %.3f s/s",
		low, high, throttled, wait)
}
