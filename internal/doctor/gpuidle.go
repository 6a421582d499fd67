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

// GPUIdleWarnHours is how many hours in all of the last day (expr.
// GPUIdleHoursWindow) one GPU of an online workload must have sat idle
// for check gpu-idle-online to name the workload: the total of its idle
// readings, in one spell or many.
const GPUIdleWarnHours = 4

// IdleGPU is one GPU an online pod held idle (below
// expr.GPUIdleUtilPercent) over the last day.
type IdleGPU struct {
	// Workload is "namespace/owner" (expr.ByWorkload).
	Workload string
	Pod      string
	// GPU is the GPU's index on its node, UUID the GPU's own (both
	// dcgm-exporter's labels).
	GPU, UUID string
	// Hours is how long the pod held it idle in the window, in all.
	Hours float64
}

// key names the GPU itself: its UUID, or without one the pod's GPU.
func (g IdleGPU) key() string {
	if g.UUID != "" {
		return g.UUID
	}
	return g.Workload + "/" + g.Pod + "/" + g.GPU
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
		out = append(out, IdleGPU{Workload: r.Metric["workload"], Pod: r.Metric["pod"], GPU: r.Metric["gpu"], UUID: r.Metric["UUID"], Hours: hours})
	}
	return out, nil
}

// idleWorkload is what check gpu-idle-online says of one workload.
type idleWorkload struct {
	name string
	// gpus are its GPUs (by UUID: one GPU its pods used in turn counts
	// once) idle for GPUIdleWarnHours or more in all; hours the GPU-hours
	// all of its GPUs idled; most the hours the most idle one sat idle.
	gpus  int
	hours float64
	most  float64
	pods  []string
}

// idleGPU is one GPU's idle hours in a workload, over the pods that held it.
type idleGPU struct {
	hours float64
	pods  []string
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
	byGPU := map[string]map[string]*idleGPU{}
	var total float64
	for _, g := range v.IdleGPUs {
		if byName[g.Workload] == nil {
			byName[g.Workload] = &idleWorkload{name: g.Workload}
			byGPU[g.Workload] = map[string]*idleGPU{}
		}
		total += g.Hours
		byName[g.Workload].hours += g.Hours
		gpu := byGPU[g.Workload][g.key()]
		if gpu == nil {
			gpu = &idleGPU{}
			byGPU[g.Workload][g.key()] = gpu
		}
		gpu.hours += g.Hours
		if !slices.Contains(gpu.pods, g.Pod) {
			gpu.pods = append(gpu.pods, g.Pod)
		}
	}
	for name, gpus := range byGPU {
		w := byName[name]
		for _, gpu := range gpus {
			w.most = max(w.most, gpu.hours)
			if gpu.hours < GPUIdleWarnHours {
				continue
			}
			w.gpus++
			for _, pod := range gpu.pods {
				if !slices.Contains(w.pods, pod) {
					w.pods = append(w.pods, pod)
				}
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
			finding += fmt.Sprintf(" (%.1f GPU-hours idle, under %dh per GPU, %d workload(s))", total, GPUIdleWarnHours, len(byName))
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
			Finding: fmt.Sprintf("online workload %s held %d GPU(s) below %d%% utilisation for %dh or more of the last %s: %.1f GPU-hours idle; the most idle GPU sat idle %.1fh of the last %s in all (pods %s)",
				w.name, w.gpus, expr.GPUIdleUtilPercent, GPUIdleWarnHours, expr.GPUIdleHoursWindow, w.hours, w.most, expr.GPUIdleHoursWindow, listNames(w.pods)),
			Fix: "if its GPUs idle at night, scale it down then (a KEDA ScaledObject's cron trigger, or an HPA with a lower minReplicas at night) so that training can borrow them; " +
				"the cockpit's row \"" + dashboards.GPUIdleRowTitle + "\" shows when they idle"})
	}
	return out
}
