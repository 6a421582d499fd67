//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// devAlertsReport is the part of `backfill dev alerts -o json` the checks
// read.
type devAlertsReport struct {
	Firing        []activeAlert `json:"firing"`
	Notifications []struct {
		Receiver string `json:"receiver"`
		Status   string `json:"status"`
		Alerts   []struct {
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	} `json:"notifications"`
}

type activeAlert struct {
	Labels    map[string]string `json:"labels"`
	Receivers []string          `json:"receivers"`
}

// checkAlertDelivered: alert, one of backfill's rules, travels the whole
// path of the local cluster: Prometheus fires it (ALERTS), Alertmanager
// holds it as active for the sink's receiver, and the sink received a
// firing notification of it, all as `backfill dev alerts -o json` reports.
func checkAlertDelivered(t *testing.T, dev func(args ...string) (string, error), prom, alert string, timeout time.Duration) {
	t.Helper()
	waitQueryPositive(t, prom, "the alert "+alert+" firing", fmt.Sprintf(`count(ALERTS{alertname=%q,alertstate="firing"})`, alert))
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 2*time.Second, timeout, true, func(context.Context) (bool, error) {
		out, err := dev("alerts", "-o", "json")
		last = out
		if err != nil {
			return false, nil
		}
		var r devAlertsReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			return false, fmt.Errorf("decoding dev alerts -o json: %w", err)
		}
		inAlertmanager := slices.ContainsFunc(r.Firing, func(a activeAlert) bool {
			return a.Labels["alertname"] == alert && len(a.Receivers) > 0
		})
		delivered := false
		for _, n := range r.Notifications {
			for _, a := range n.Alerts {
				delivered = delivered || (n.Status == "firing" && a.Labels["alertname"] == alert)
			}
		}
		return inAlertmanager && delivered, nil
	})
	if err != nil {
		t.Errorf("Waiting for %s to be active in Alertmanager and delivered to the sink: %v; last dev alerts -o json:\n%s", alert, err, last)
	}
}

// firingAlerts are the names of the alerts Prometheus fires now, for the
// log.
func firingAlerts(ctx context.Context, prom string) []string {
	var body struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := getJSON(ctx, prom+"/api/v1/query?query="+url.QueryEscape(`count by (alertname) (ALERTS{alertstate="firing"})`), &body); err != nil {
		return nil
	}
	var names []string
	for _, r := range body.Data.Result {
		names = append(names, r.Metric["alertname"])
	}
	slices.Sort(names)
	return names
}
