package doctor

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/backfill-dev/backfill/internal/observability/dashboards"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// GPUIdleWarnHours is how many hours of the last day (expr.
// GPUIdleHoursWindow) one GPU of an online workload must have idled for
// check gpu-idle-online to name the workload: a night, not a lull.
const GPUIdleWarnHours = 4

// IdleGPU is one GPU an online pod held idle (below
// expr.GPUIdleUtilPercent) over the last day.
type IdleGPU struct {
	// Workload is "namespace/owner" (expr.ByWorkload).
	Workload string
	Pod      string
	GPU      string
	// Hours is how long it idled in the window.
	Hours float64
}

// IdleGPUsQuery is what check gpu-idle-online asks Prometheus: each GPU
// online pods held idle over the last day, in hours, by workload.
func IdleGPUsQuery() string {
	return expr.ByWorkload(expr.OnlineGPUIdleHoursByGPUOver(expr.GPUIdleHoursWindow))
}

// readIdleGPUs runs IdleGPUsQuery.
func readIdleGPUs(ctx context.Context, hc *http.Client, base string) ([]IdleGPU, error) {
	var result struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := promGet(ctx, hc, base, "/api/v1/query", url.Values{"query": {IdleGPUsQuery()}}, &result); err != nil {
		return nil, err
	}
	out := make([]IdleGPU, 0, len(result.Result))
	for _, r := range result.Result {
		s, _ := r.Value[1].(string)
		hours, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("decoding the idle hours of %v: %q is no number", r.Metric, s)
		}
		out = append(out, IdleGPU{Workload: r.Metric["workload"], Pod: r.Metric["pod"], GPU: r.Metric["gpu"], Hours: hours})
	}
	return out, nil
}

// idleWorkload is what check gpu-idle-online says of one workload.
type idleWorkload struct {
	name string
	// gpus are its GPUs idle for GPUIdleWarnHours or more; hours the
	// GPU-hours all of its GPUs idled; longest the most one idled.
	gpus    int
	hours   float64
	longest float64
	pods    []string
}

// checkGPUIdleOnline names the online workloads whose pods held a GPU
// idle (below expr.GPUIdleUtilPercent) for GPUIdleWarnHours or more of
// the last day: GPUs they could lend training at night. A WARN, as
// nothing is broken; SKIP when Prometheus cannot be read or has no
// dcgm-exporter utilisation; nothing without a Prometheus URL, which the
// prometheus SKIP says.
func checkGPUIdleOnline(v *PrometheusView) []Result {
	switch {
	case v == nil:
		// The prometheus SKIP says it for every check of Prometheus.
		return nil
	case v.Err != nil:
		return []Result{{Check: CheckGPUIdleOnline, Status: StatusSkip,
			Finding: "GPUs held idle by online pods not checked: Prometheus could not be read (see prometheus-targets)"}}
	case v.Series[expr.MetricGPUUtil] == 0:
		why := "it has no series"
		if err := v.Errs[expr.MetricGPUUtil]; err != nil {
			why = "querying it failed: " + err.Error()
		}
		return []Result{{Check: CheckGPUIdleOnline, Status: StatusSkip,
			Finding: fmt.Sprintf("GPUs held idle by online pods not checked: no GPU utilisation in Prometheus (%s, %s)", expr.MetricGPUUtil, why),
			Fix:     "expected on a cluster without GPUs; otherwise scrape dcgm-exporter on the GPU nodes (see prometheus-targets)"}}
	case v.IdleGPUsErr != nil:
		return []Result{{Check: CheckGPUIdleOnline, Status: StatusWarn,
			Finding: fmt.Sprintf("the query of GPUs held idle by online pods failed: %v", v.IdleGPUsErr),
			Fix:     honorLabelsHint + ". The query is " + IdleGPUsQuery()}}
	}
	byName := map[string]*idleWorkload{}
	var total float64
	for _, g := range v.IdleGPUs {
		w := byName[g.Workload]
		if w == nil {
			w = &idleWorkload{name: g.Workload}
			byName[g.Workload] = w
		}
		total += g.Hours
		w.hours += g.Hours
		w.longest = max(w.longest, g.Hours)
		if g.Hours >= GPUIdleWarnHours {
			w.gpus++
			if !slices.Contains(w.pods, g.Pod) {
				w.pods = append(w.pods, g.Pod)
			}
		}
	}
	var idle []*idleWorkload
	for _, w := range byName {
		if w.gpus > 0 {
			idle = append(idle, w)
		}
	}
	if len(idle) == 0 {
		finding := fmt.Sprintf("no online pod held a GPU below %d%% utilisation for %dh or more of the last %s", expr.GPUIdleUtilPercent, GPUIdleWarnHours, expr.GPUIdleHoursWindow)
		if total > 0 {
			finding += fmt.Sprintf(" (%.1f GPU-hours idle in shorter spells, %d workload(s))", total, len(byName))
		}
		return []Result{ok(CheckGPUIdleOnline, finding)}
	}
	slices.SortFunc(idle, func(a, b *idleWorkload) int {
		return cmp.Or(cmp.Compare(b.hours, a.hours), strings.Compare(a.name, b.name))
	})
	out := make([]Result, 0, len(idle))
	for _, w := range idle {
		slices.Sort(w.pods)
		out = append(out, Result{Check: CheckGPUIdleOnline, Status: StatusWarn, Object: "workload " + w.name,
			Finding: fmt.Sprintf("online workload %s held %d GPU(s) below %d%% utilisation for %dh or more of the last %s: %.1f GPU-hours idle, the longest one GPU %.1fh (pods %s)",
				w.name, w.gpus, expr.GPUIdleUtilPercent, GPUIdleWarnHours, expr.GPUIdleHoursWindow, w.hours, w.longest, listNames(w.pods)),
			Fix: "if its GPUs idle at night, scale it down then (a KEDA ScaledObject's cron trigger, or an HPA with a lower minReplicas at night) so that training can borrow them; " +
				"the cockpit's row \"" + dashboards.GPUIdleRowTitle + "\" shows when they idle"})
	}
	return out
}
