package reclaim

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// MetricsAPISource reads usage from the Kubernetes metrics API
// (metrics.k8s.io, served by metrics-server: what `kubectl top` and the
// HPA read). The API has no history, so the source keeps each node's
// online use over the window itself; until it has watched for a whole
// window its peaks are Partial and capacity does not grow on them.
type MetricsAPISource struct {
	client metricsclient.MetricsV1beta1Interface
	pods   podLister
	// window is the peak's look-back, lasting the CPU eviction delay.
	window, lasting time.Duration

	began   time.Time
	history map[string][]sample
}

// podLister tells each pod's node and tier: the cluster view.
type podLister interface {
	Pods() []*clusterview.Pod
}

// sample is one reading of a node's online use, and of its use beyond
// its pods (the system's).
type sample struct {
	at             time.Time
	online, system Resources
}

// NewMetricsAPISource reads the metrics API of the cluster of cfg and
// splits use into online and offline by the pods of view, over the window
// and CPU eviction delay of s.
func NewMetricsAPISource(cfg *rest.Config, view podLister, s Settings) (*MetricsAPISource, error) {
	c, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the metrics API client: %w", err)
	}
	return &MetricsAPISource{client: c, pods: view, window: s.Window, lasting: s.CPUEvictionDelay, history: map[string][]sample{}}, nil
}

// Name implements UsageSource.
func (s *MetricsAPISource) Name() string { return "metrics-api" }

// Usage implements UsageSource.
func (s *MetricsAPISource) Usage(ctx context.Context, now time.Time) (map[string]Usage, error) {
	nodes, err := s.client.NodeMetricses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing node metrics (is metrics-server running? `kubectl top nodes` tells): %w", err)
	}
	pods, err := s.client.PodMetricses(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pod metrics: %w", err)
	}
	if s.began.IsZero() {
		s.began = now
	}
	online, all := s.podUse(pods.Items)
	out := map[string]Usage{}
	for _, n := range nodes.Items {
		at := n.Timestamp.Time
		system := usageOf(n.Usage).Sub(all[n.Name]).NonNegative()
		s.record(n.Name, sample{at: at, online: online[n.Name], system: system}, now)
		u := Usage{At: at, Partial: now.Sub(s.began) < s.window, SystemKnown: true}
		var systems []Resources
		u.OnlineLasting = online[n.Name]
		for _, smp := range s.history[n.Name] {
			u.OnlinePeak = u.OnlinePeak.Max(smp.online)
			systems = append(systems, smp.system)
			if at.Sub(smp.at) <= s.lasting {
				u.OnlineLasting.MilliCPU = min(u.OnlineLasting.MilliCPU, smp.online.MilliCPU)
			}
		}
		u.OnlineLasting.Memory = u.OnlinePeak.Memory
		u.System = median(systems)
		out[n.Name] = u
	}
	for name := range s.history {
		if _, ok := out[name]; !ok {
			delete(s.history, name)
		}
	}
	return out, nil
}

// podUse sums the pods' use by node: of online pods, and of all pods.
func (s *MetricsAPISource) podUse(items []metricsv1beta1.PodMetrics) (online, all map[string]Resources) {
	type place struct {
		node string
		tier colocation.Tier
	}
	where := map[string]place{}
	for _, p := range s.pods.Pods() {
		where[p.Namespace+"/"+p.Name] = place{p.Node, p.Tier}
	}
	online, all = map[string]Resources{}, map[string]Resources{}
	for _, pm := range items {
		at, ok := where[pm.Namespace+"/"+pm.Name]
		if !ok {
			continue // finished, or not bound: it uses nothing
		}
		var use Resources
		for _, c := range pm.Containers {
			use = use.Add(usageOf(c.Usage))
		}
		all[at.node] = all[at.node].Add(use)
		if at.tier == colocation.TierOnline {
			online[at.node] = online[at.node].Add(use)
		}
	}
	return online, all
}

// record keeps a node's new sample and forgets those older than the
// window; a sample no newer than the last is a repeat.
func (s *MetricsAPISource) record(node string, smp sample, now time.Time) {
	h := s.history[node]
	if n := len(h); n == 0 || smp.at.After(h[n-1].at) {
		h = append(h, smp)
	}
	for len(h) > 1 && now.Sub(h[0].at) > s.window {
		h = h[1:]
	}
	s.history[node] = h
}

func usageOf(list corev1.ResourceList) Resources {
	return Resources{MilliCPU: list.Cpu().MilliValue(), Memory: list.Memory().Value()}
}

// median is the median of each resource over samples: the system's steady
// use, without the spikes of a pod that shows in the node's use before its
// own (or after).
func median(samples []Resources) Resources {
	if len(samples) == 0 {
		return Resources{}
	}
	cpu, mem := make([]int64, len(samples)), make([]int64, len(samples))
	for i, r := range samples {
		cpu[i], mem[i] = r.MilliCPU, r.Memory
	}
	slices.Sort(cpu)
	slices.Sort(mem)
	return Resources{MilliCPU: cpu[len(cpu)/2], Memory: mem[len(mem)/2]}
}
