package reclaim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// The online pods' join series the manager exports (internal/metrics) and
// the peers label of the P99s the signal reads.
const (
	metricOnlinePodInfo = "backfill_online_pod_info"
	// PeersAll, PeersWithOffline and PeersWithoutOffline are a workload's
	// pods: all of them, those on nodes where offline pods run, the others.
	PeersAll            = "all"
	PeersWithOffline    = "with_offline"
	PeersWithoutOffline = "without_offline"
)

// WorkloadLatency is an opted-in workload's P99 at one decision, by peers
// (PeersAll, PeersWithOffline, PeersWithoutOffline); a group whose pods
// served no request has none.
type WorkloadLatency struct {
	Namespace, Workload string
	Objective           time.Duration
	P99                 map[string]time.Duration
}

// OnlineSignals reads what online pods say of their service: the P99 of
// each opted-in workload per node and per peers, from its own histogram
// joined with the manager's backfill_online_pod_info, and how long online
// pods wait for a CPU (the node agent's series, else cAdvisor's PSI).
type OnlineSignals struct {
	prom   *promQueries
	window time.Duration
}

// NewOnlineSignals reads the Prometheus at url over a rate window.
func NewOnlineSignals(url string, window time.Duration) (*OnlineSignals, error) {
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		return nil, fmt.Errorf("--prometheus-url %q: %w", url, err)
	}
	return &OnlineSignals{prom: newPromQueries(promv1.NewAPI(c)), window: window}, nil
}

// workload is an opted-in workload as the view's pods declare it.
type workload struct {
	namespace, name string
	objective       *colocation.LatencyObjective
}

// optedIn are the workloads of the view's online pods that declare an
// objective, the first pod's word for each, in a stable order.
func optedIn(pods []*clusterview.Pod) []workload {
	seen := map[string]bool{}
	var out []workload
	for _, p := range pods {
		key := p.Namespace + "/" + p.Workload
		if p.Online == nil || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, workload{namespace: p.Namespace, name: p.Workload, objective: p.Online})
	}
	slices.SortFunc(out, func(a, b workload) int { return strings.Compare(a.namespace+"/"+a.name, b.namespace+"/"+b.name) })
	return out
}

// P99Query is the PromQL of the P99 of the workloads that read one
// histogram (metrics, stored as kind), by the labels of by, from
// namespace, workload, node and offline_beside.
func P99Query(metrics []string, kind string, window time.Duration, by ...string) string {
	w := model.Duration(window).String()
	group := strings.Join(by, ", ")
	// topk keeps one info series per pod while two managers' series
	// overlap at a leader change.
	info := "topk by (namespace, pod) (1, " + metricOnlinePodInfo + ")"
	join := " * on (namespace, pod) group_left (workload, node, offline_beside) " + info
	names := func(suffix string) string {
		var alt []string
		for _, m := range metrics {
			alt = append(alt, m+suffix)
		}
		return fmt.Sprintf(`{__name__=~%q}`, strings.Join(alt, "|"))
	}
	native := fmt.Sprintf("histogram_quantile(0.99, sum by (%s) (rate(%s[%s])%s))", group, names(""), w, join)
	classic := fmt.Sprintf("histogram_quantile(0.99, sum by (%s, le) (rate(%s[%s])%s))", group, names("_bucket"), w, join)
	switch kind {
	case colocation.HistogramNative:
		return native
	case colocation.HistogramClassic:
		return classic
	}
	return native + " or " + classic
}

// CPUWaitQuery is the PromQL of how long each node's online pods waited
// for a CPU together, in seconds per second: the node agent's measure
// where it runs, else the kubelet's PSI of the pods that are not offline.
func CPUWaitQuery(window time.Duration) string {
	return expr.OnlineCPUPressureByNodeOver(model.Duration(window).String(), "")
}

// Read returns each node's signal and each opted-in workload's latency,
// as of now.
func (o *OnlineSignals) Read(ctx context.Context, now time.Time, pods []*clusterview.Pod) (map[string]OnlineSignal, []WorkloadLatency, error) {
	signals := map[string]OnlineSignal{}
	wait, err := o.query(ctx, CPUWaitQuery(o.window), now)
	if err != nil {
		return nil, nil, fmt.Errorf("querying the CPU wait of online pods: %w", err)
	}
	for _, s := range wait {
		if v := float64(s.Value); !math.IsNaN(v) {
			signals[string(s.Metric["node"])] = OnlineSignal{CPUWait: v, WaitKnown: true}
		}
	}
	workloads := optedIn(pods)
	var latencies []WorkloadLatency
	for _, group := range byHistogram(workloads) {
		byNode, err := o.p99(ctx, group, now, "node")
		if err != nil {
			return nil, nil, err
		}
		all, err := o.p99(ctx, group, now)
		if err != nil {
			return nil, nil, err
		}
		peers, err := o.p99(ctx, group, now, "offline_beside")
		if err != nil {
			return nil, nil, err
		}
		for _, w := range group {
			key := w.namespace + "/" + w.name
			l := WorkloadLatency{Namespace: w.namespace, Workload: w.name, Objective: w.objective.P99, P99: map[string]time.Duration{}}
			if v, ok := all[key+"|"]; ok {
				l.P99[PeersAll] = v
			}
			if v, ok := peers[key+"|true"]; ok {
				l.P99[PeersWithOffline] = v
			}
			if v, ok := peers[key+"|false"]; ok {
				l.P99[PeersWithoutOffline] = v
			}
			latencies = append(latencies, l)
			for k, p99 := range byNode {
				node, ok := strings.CutPrefix(k, key+"|")
				if !ok {
					continue
				}
				signals[node] = withLatency(signals[node], key, p99, w.objective.P99)
			}
		}
	}
	return signals, latencies, nil
}

// withLatency adds a workload's P99 on a node to its signal: the least
// slack of the node's workloads speaks for it.
func withLatency(s OnlineSignal, workload string, p99, objective time.Duration) OnlineSignal {
	slack := float64(objective-p99) / float64(objective)
	if !s.SlackKnown || slack < s.Slack {
		s.Slack, s.SlackKnown, s.Workload, s.P99, s.Objective = slack, true, workload, p99, objective
	}
	return s
}

// byHistogram groups workloads by the histogram they read, so that one
// query serves all of a group.
func byHistogram(workloads []workload) [][]workload {
	index := map[string]int{}
	var groups [][]workload
	for _, w := range workloads {
		key := w.objective.Histogram + " " + strings.Join(w.objective.Metrics, "|")
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], w)
	}
	return groups
}

// p99 queries one group's P99 by namespace, workload and the labels of
// by, keyed "namespace/workload|value of by", keeping only the group's
// own workloads: a pod may expose the histogram another workload reads.
func (o *OnlineSignals) p99(ctx context.Context, group []workload, now time.Time, by ...string) (map[string]time.Duration, error) {
	first := group[0].objective
	q := P99Query(first.Metrics, first.Histogram, o.window, append([]string{"namespace", "workload"}, by...)...)
	vec, err := o.query(ctx, q, now)
	if err != nil {
		return nil, fmt.Errorf("querying the latency of %s: %w", strings.Join(first.Metrics, " or "), err)
	}
	own := map[string]bool{}
	for _, w := range group {
		own[w.namespace+"/"+w.name] = true
	}
	out := map[string]time.Duration{}
	for _, s := range vec {
		key := string(s.Metric["namespace"]) + "/" + string(s.Metric["workload"])
		v := float64(s.Value)
		if !own[key] || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		var label string
		if len(by) > 0 {
			label = string(s.Metric[model.LabelName(by[0])])
		}
		out[key+"|"+label] = time.Duration(v * float64(time.Second))
	}
	return out, nil
}

func (o *OnlineSignals) query(ctx context.Context, q string, at time.Time) (model.Vector, error) {
	return o.prom.instant(ctx, q, at)
}
