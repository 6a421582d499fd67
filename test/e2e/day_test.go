//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/backfill-dev/backfill/internal/observability/dashboards"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// The demo's compressed day in the e2e suite: 6 minutes, the afternoon
// peak at 15:00 is 3m45s after the cluster starts.
const (
	demoDay   = 6 * time.Minute
	demoPeak  = demoDay * 15 / 24
	dayWindow = "10m" // looks back over the whole run
)

// checkCompressedDay checks what the demo's day shows a user: by night
// training fills the capacity online pods request but do not use, so on
// the CPU nodes, which the online service requests whole, CPU utilisation
// (the cockpit's, from its per-node usage) rises above the most that
// priority alone could reach there (online use plus what online pods do
// not request, which is nothing); at the afternoon peak offline pods are
// evicted for online work.
func checkCompressedDay(t *testing.T, prom string, started time.Time) {
	t.Helper()
	const cpuNodes = `node=~"cpu-.*"`
	onCPUNodes := ` and on (node) group by (node) (backfill_node_allocatable{` + cpuNodes + `})`
	allocatable := `sum(backfill_node_allocatable{resource="cpu",` + cpuNodes + `})`
	util := fmt.Sprintf(`100 * sum(%s%s) / %s`, expr.CPUUsedByNodeOver("1m"), onCPUNodes, allocatable)
	// Priority alone: offline pods could use only what online pods leave
	// unrequested, on top of what online pods use.
	byPriority := fmt.Sprintf(`100 * (sum(%s%s) + sum(clamp_min(sum by (node) (backfill_node_allocatable{resource="cpu",%s}) - sum by (node) (backfill_node_requests{tier="online",resource="cpu",%s}), 0))) / %s`,
		expr.OnlineCPUUsedByNodeOver("1m"), onCPUNodes, cpuNodes, cpuNodes, allocatable)
	gain := fmt.Sprintf(`max_over_time(((%s) - (%s))[%s:15s])`, util, byPriority, dayWindow)
	var gained float64
	pollValue(t, prom, "utilisation above what priority alone reaches", gain, 3*time.Minute, func(v float64) bool {
		gained = v
		return v > 5
	})
	if wait := time.Until(started.Add(demoPeak)); wait > 0 {
		t.Logf("Waiting %v for the online service's afternoon peak", wait.Round(time.Second))
	}
	var evictions float64
	pollValue(t, prom, "evictions for online protection at the peak", `sum(increase(backfill_reclaim_evictions_total{result="evicted"}[`+dayWindow+`]))`,
		time.Until(started.Add(demoDay)), func(v float64) bool {
			evictions = v
			return v >= 1 && time.Now().After(started.Add(demoPeak-demoDay/12))
		})
	peakUtil := queryValue(t, prom, fmt.Sprintf(`max_over_time((%s)[%s:15s])`, util, dayWindow))
	peakPriority := queryValue(t, prom, fmt.Sprintf(`max_over_time((%s)[%s:15s])`, byPriority, dayWindow))
	cluster := queryValue(t, prom, fmt.Sprintf(`max_over_time((%s)[%s:15s])`, figureQuery(t, "Cluster CPU utilisation"), dayWindow))
	t.Logf("Compressed day: CPU nodes' CPU utilisation up to %.1f%% against %.1f%% by priority alone (at most %.1f points above it at one time); the cockpit's cluster CPU utilisation up to %.1f%%; %.0f evictions for online protection",
		peakUtil, peakPriority, gained, cluster, evictions)
}

// figureQuery is a cockpit figure's query, with the dashboard's variables
// set for the whole cluster and a 1m rate window.
func figureQuery(t *testing.T, title string) string {
	t.Helper()
	for _, f := range dashboards.CockpitFigures() {
		if f.Title == title {
			return dashboards.Substitute(f.Query.Expr, map[string]string{
				dashboards.VarNamespace: dashboards.AllValue, dashboards.VarTFJob: dashboards.AllValue, "__rate_interval": "1m",
			})
		}
	}
	t.Fatalf("The cockpit has no figure %q", title)
	return ""
}

// pollValue polls an instant query until ok holds of its value, failing t
// after timeout.
func pollValue(t *testing.T, prom, what, query string, timeout time.Duration, ok func(float64) bool) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Second, max(timeout, 10*time.Second), true, func(ctx context.Context) (bool, error) {
		v, err := instant(ctx, prom, query)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = strconv.FormatFloat(v, 'f', 2, 64)
		return ok(v), nil
	})
	if err != nil {
		t.Fatalf("Waiting for %s (%s): %v; last value %s", what, query, err, last)
	}
}

// queryValue is an instant query's single value, failing t without one.
func queryValue(t *testing.T, prom, query string) float64 {
	t.Helper()
	v, err := instant(context.Background(), prom, query)
	if err != nil {
		t.Fatalf("Querying %s: %v", query, err)
	}
	return v
}

func instant(ctx context.Context, prom, query string) (float64, error) {
	var body struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := getJSON(ctx, prom+"/api/v1/query?query="+url.QueryEscape(query), &body); err != nil {
		return 0, err
	}
	if len(body.Data.Result) != 1 {
		return 0, fmt.Errorf("%d series, want 1", len(body.Data.Result))
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}
