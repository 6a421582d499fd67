package doctor

import (
	"fmt"
	"regexp"
	"strings"
)

// Target is one active scrape target as Prometheus's /api/v1/targets
// reports it.
type Target struct {
	Job       string
	ScrapeURL string
	// Health is "up", "down" or "unknown" (not scraped yet).
	Health    string
	LastError string
}

// targetGroup is a kind of exporter the cockpit needs, recognised by its
// scrape job's name, as installs name them differently (kube-prometheus-
// stack: kubelet, node-exporter; backfill dev: kubelet-resource).
type targetGroup struct {
	name string
	job  *regexp.Regexp
	// what is missing when the group has no target.
	feeds string
	fix   string
	// needsGPU: only a FAIL when the cluster has GPUs.
	needsGPU bool
}

var targetGroups = []targetGroup{
	{
		name: "node metrics (kubelet/cAdvisor, node-exporter)", job: regexp.MustCompile(`(?i)kubelet|cadvisor|node-exporter`),
		feeds: "CPU and memory use of online and offline pods",
		fix:   "enable the kubelet/cAdvisor ServiceMonitor of kube-prometheus-stack (kubelet.enabled) and node-exporter",
	},
	{
		name: "dcgm-exporter", job: regexp.MustCompile(`(?i)dcgm`), needsGPU: true,
		feeds: "GPU utilisation (DCGM_FI_DEV_*)",
		fix:   "install dcgm-exporter on the GPU nodes with its ServiceMonitor enabled and the label your Prometheus selects (release=<your kube-prometheus-stack release>)",
	},
	{
		name: "backfill manager", job: regexp.MustCompile(`(?i)backfill`),
		feeds: "the operator's and co-location metrics (backfill_*)",
		fix:   "enable the chart's ServiceMonitor (monitoring.serviceMonitor.enabled) with the label your Prometheus selects, and check the manager's metrics port",
	},
}

// checkTargets says, for each kind of exporter, whether Prometheus scrapes
// it and whether its targets are up. gpuNodes is the number of nodes with
// nvidia.com/gpu allocatable.
func checkTargets(targets []Target, gpuNodes int) []Result {
	var out []Result
	for _, g := range targetGroups {
		var all, down []Target
		for _, t := range targets {
			if g.job.MatchString(t.Job) {
				all = append(all, t)
				if t.Health == "down" {
					down = append(down, t)
				}
			}
		}
		switch {
		case len(all) == 0:
			status := StatusFail
			if g.needsGPU && gpuNodes == 0 {
				status = StatusWarn
			}
			out = append(out, Result{Check: CheckPrometheusTargets, Status: status, Object: g.name,
				Finding: fmt.Sprintf("Prometheus has no scrape target for %s: panels of %s show No data", g.name, g.feeds),
				Fix:     g.fix})
		case len(down) > 0:
			out = append(out, Result{Check: CheckPrometheusTargets, Status: StatusFail, Object: g.name,
				Finding: fmt.Sprintf("%d of %d %s target(s) down (job %s, %s: %s)", len(down), len(all), g.name, down[0].Job, down[0].ScrapeURL, strings.TrimSpace(down[0].LastError)),
				Fix:     "make the exporter reachable from Prometheus at that address (pod running, port, NetworkPolicy), then look at /targets again"})
		default:
			out = append(out, ok(CheckPrometheusTargets, fmt.Sprintf("%s: %d target(s) up (job %s)", g.name, len(all), all[0].Job)))
		}
	}
	return out
}

// KeyMetric is a series the dashboards and alerts depend on.
type KeyMetric struct {
	Name string
	// Feeds says which panels show No data without it.
	Feeds string
	Fix   string
	// NeedsGPU: no data is expected on a cluster without GPUs.
	NeedsGPU bool
}

// KeyMetrics are the series whose absence is the usual cause of Grafana's
// "No data".
var KeyMetrics = []KeyMetric{
	{Name: "backfill_node_allocatable", Feeds: "the capacity panels of the co-location dashboard",
		Fix: "scrape the backfill manager (see prometheus-targets) and keep its --colocation-metrics on"},
	{Name: "container_cpu_usage_seconds_total", Feeds: "the CPU use of online and offline pods",
		Fix: "scrape the kubelet's cAdvisor endpoint (/metrics/cadvisor) or, with backfill dev, the simulated kubelet"},
	{Name: "DCGM_FI_DEV_GPU_UTIL", Feeds: "GPU utilisation", NeedsGPU: true,
		Fix: "scrape dcgm-exporter (see prometheus-targets); its pods must run on the GPU nodes"},
}

// checkData says whether each key metric has series. series holds the
// number of series per metric name; an absent name means the query
// failed, with its error in errs.
func checkData(series map[string]int, errs map[string]error, gpuNodes int) []Result {
	var out []Result
	for _, m := range KeyMetrics {
		n, asked := series[m.Name]
		switch {
		case !asked:
			out = append(out, Result{Check: CheckPrometheusData, Status: StatusFail, Object: m.Name,
				Finding: fmt.Sprintf("querying %s failed: %v", m.Name, errs[m.Name]), Fix: "check the Prometheus URL and that Prometheus answers /api/v1/query"})
		case n == 0 && m.NeedsGPU && gpuNodes == 0:
			out = append(out, ok(CheckPrometheusData, fmt.Sprintf("%s has no series, as expected on a cluster without GPUs", m.Name)))
		case n == 0:
			out = append(out, Result{Check: CheckPrometheusData, Status: StatusFail, Object: m.Name,
				Finding: fmt.Sprintf("%s returns no data: %s show No data in Grafana", m.Name, m.Feeds), Fix: m.Fix})
		default:
			out = append(out, ok(CheckPrometheusData, fmt.Sprintf("%s has %d series", m.Name, n)))
		}
	}
	return out
}

// prometheusSkipped is the line that says the Prometheus checks did not run.
func prometheusSkipped() Result {
	return Result{Check: CheckPrometheus, Status: StatusSkip,
		Finding: "Prometheus checks skipped: no --prometheus-url given (and no local backfill dev cluster to take it from)",
		Fix:     "pass --prometheus-url http://PROMETHEUS:9090 (e.g. after kubectl port-forward svc/prometheus-operated 9090)"}
}
