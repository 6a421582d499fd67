package reclaim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// PrometheusSource reads usage from the kubelet's series in Prometheus:
// container_cpu_usage_seconds_total and container_memory_working_set_bytes
// labelled node (cAdvisor or /metrics/resource, as kube-prometheus-stack
// scrapes them), split into online and offline by the manager's own
// backfill_offline_pod_info, and node_cpu_usage_seconds_total and
// node_memory_working_set_bytes (/metrics/resource) for the system's use
// where Prometheus has them. Every query covers all nodes at once.
type PrometheusSource struct {
	prom *promQueries
	// window is the peak's look-back and lasting the CPU eviction delay;
	// rateWindow is the window of rate() over the CPU counters, at least
	// four scrape intervals.
	window, lasting, rateWindow time.Duration
}

// NewPrometheusSource queries the Prometheus at url for the window and
// CPU eviction delay of s.
func NewPrometheusSource(url string, s Settings, rateWindow time.Duration) (*PrometheusSource, error) {
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		return nil, fmt.Errorf("--prometheus-url %q: %w", url, err)
	}
	return &PrometheusSource{prom: newPromQueries(promv1.NewAPI(c)), window: s.Window, lasting: s.CPUEvictionDelay, rateWindow: rateWindow}, nil
}

// Name implements UsageSource.
func (s *PrometheusSource) Name() string { return "prometheus" }

// offlineLookback keeps a pod offline for the online/offline split for a
// while after its last backfill_offline_pod_info sample: while the manager
// restarts or hands over leadership, its series pause, and offline use
// must not be counted as online meanwhile.
const offlineLookback = 5 * time.Minute

// Queries are the PromQL expressions of the source, by what they measure.
func (s *PrometheusSource) Queries() map[string]string {
	rw := model.Duration(s.rateWindow).String()
	// The offline pods are those the manager has reported at any time of
	// the window (and the lookback before it) up to now, @ end(): the
	// same set at every step of a peak's subquery. A new pod's kubelet
	// series can come a scrape before the manager's series names it
	// offline; a split taken at each step alone would count that first
	// sample as online, and the peak would keep it for the whole window,
	// evicting offline pods for memory no online pod uses.
	offline := fmt.Sprintf("group by (namespace, pod) (last_over_time(%s[%s] @ end()))",
		expr.MetricOfflinePodInfo, model.Duration(max(s.window, s.lasting)+offlineLookback))
	online := func(byPod string) string {
		return "sum by (node) (" + byPod + " unless on (namespace, pod) " + offline + ")"
	}
	cpuByPod := fmt.Sprintf("sum by (node, namespace, pod) (rate(%s{%s}[%s]))", expr.MetricCPUUsage, expr.ContainerSelector, rw)
	memByPod := fmt.Sprintf("sum by (node, namespace, pod) (%s{%s})", expr.MetricMemoryWorkingSet, expr.ContainerSelector)
	// The peak's resolution is a quarter of the rate window (about one
	// scrape), not Prometheus's evaluation interval, which may be a minute.
	step := max((s.rateWindow / 4).Truncate(time.Second), time.Second)
	peak := func(e string) string {
		return fmt.Sprintf("max_over_time((%s)[%s:%s])", e, model.Duration(s.window), model.Duration(step))
	}
	// The system's use is the node's minus its pods', two series scraped
	// apart: a pod starting or ending shows in one before the other. The
	// median over the window keeps the system's steady use and drops those
	// spikes, which are no one's use.
	typical := func(e string) string {
		return fmt.Sprintf("quantile_over_time(0.5, (%s)[%s:%s])", e, model.Duration(s.window), model.Duration(step))
	}
	lasting := online(cpuByPod)
	if s.lasting > step {
		lasting = fmt.Sprintf("min_over_time((%s)[%s:%s])", lasting, model.Duration(s.lasting), model.Duration(step))
	}
	return map[string]string{
		queryOnlineCPU:        peak(online(cpuByPod)),
		queryOnlineCPULasting: lasting,
		queryOnlineMemory:     peak(online(memByPod)),
		querySystemCPU: typical(fmt.Sprintf("clamp_min(sum by (node) (rate(node_cpu_usage_seconds_total[%s])) - (sum by (node) (rate(%s{%s}[%s])) or sum by (node) (rate(node_cpu_usage_seconds_total[%s])) * 0), 0)",
			rw, expr.MetricCPUUsage, expr.ContainerSelector, rw, rw)),
		querySystemMemory: typical(fmt.Sprintf("clamp_min(sum by (node) (node_memory_working_set_bytes) - (sum by (node) (%s{%s}) or sum by (node) (node_memory_working_set_bytes) * 0), 0)",
			expr.MetricMemoryWorkingSet, expr.ContainerSelector)),
		queryNewest:  `max by (node) (timestamp({__name__=~"` + expr.MetricCPUUsage + `|node_cpu_usage_seconds_total",node!=""}))`,
		queryManager: "count(" + expr.MetricOfflinePodInfo + " or backfill_node_allocatable)",
	}
}

// The queries of Queries.
const (
	queryOnlineCPU        = "online CPU peak"
	queryOnlineCPULasting = "lasting online CPU"
	queryOnlineMemory     = "online memory peak"
	querySystemCPU        = "system CPU"
	querySystemMemory     = "system memory"
	queryNewest           = "newest sample"
	queryManager          = "manager's series"
)

// Usage implements UsageSource.
func (s *PrometheusSource) Usage(ctx context.Context, now time.Time) (map[string]Usage, error) {
	queries := s.Queries()
	results := map[string]model.Vector{}
	for name, q := range queries {
		v, err := s.query(ctx, q, now)
		if err != nil {
			return nil, fmt.Errorf("querying the %s: %w", name, err)
		}
		results[name] = v
	}
	if len(results[queryManager]) == 0 {
		return nil, errors.New("the Prometheus has no backfill_node_allocatable or backfill_offline_pod_info series: it does not scrape the manager (see docs/install.md), and without them offline use would count as online")
	}
	out := map[string]Usage{}
	for _, smp := range results[queryNewest] {
		out[string(smp.Metric["node"])] = Usage{At: time.Unix(int64(smp.Value), 0)}
	}
	set := func(name string, apply func(u *Usage, v float64)) {
		for _, smp := range results[name] {
			node := string(smp.Metric["node"])
			u, ok := out[node]
			if !ok || math.IsNaN(float64(smp.Value)) {
				continue
			}
			apply(&u, float64(smp.Value))
			out[node] = u
		}
	}
	set(queryOnlineCPU, func(u *Usage, v float64) { u.OnlinePeak.MilliCPU = int64(math.Ceil(v * 1000)) })
	set(queryOnlineCPULasting, func(u *Usage, v float64) { u.OnlineLasting.MilliCPU = int64(math.Ceil(v * 1000)) })
	set(queryOnlineMemory, func(u *Usage, v float64) {
		u.OnlinePeak.Memory, u.OnlineLasting.Memory = int64(math.Ceil(v)), int64(math.Ceil(v))
	})
	set(querySystemCPU, func(u *Usage, v float64) { u.System.MilliCPU, u.SystemKnown = int64(math.Ceil(v*1000)), true })
	set(querySystemMemory, func(u *Usage, v float64) { u.System.Memory, u.SystemKnown = int64(math.Ceil(v)), true })
	return out, nil
}

func (s *PrometheusSource) query(ctx context.Context, q string, at time.Time) (model.Vector, error) {
	return s.prom.instant(ctx, q, at)
}
