package latencysim

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
)

// MetricsPath is where the simulator serves its histograms.
const MetricsPath = "/metrics"

// labelNames are the histograms' labels: the pod that served the
// requests, as a scrape of the pod itself would label them. The local
// Prometheus honors them.
var labelNames = []string{"namespace", "pod"}

// listTimeout bounds the listing done for one scrape, well inside the
// scrape timeout of the local Prometheus.
const listTimeout = 3 * time.Second

// Lister gives the simulator the cluster's nodes and pods, read afresh at
// every scrape (gpusim.ClientLister is one).
type Lister interface {
	Nodes(ctx context.Context) ([]corev1.Node, error)
	Pods(ctx context.Context) ([]corev1.Pod, error)
}

// Collector is a prometheus.Collector that advances a Simulator to the
// time of each scrape, under the loads of the cluster as Lister sees it
// then, and publishes its histograms.
type Collector struct {
	lister Lister
	now    func() time.Time

	mu    sync.Mutex // one scrape advances the simulation at a time
	sim   *Simulator
	descs map[string]*prometheus.Desc // by metric name
}

var _ prometheus.Collector = (*Collector)(nil)

// errorDesc names what failed when a scrape fails.
var errorDesc = prometheus.NewDesc("latencysim_cluster_listing", "The latency simulator's listing of the cluster's nodes and pods.", nil, nil)

// NewCollector returns a Collector reading the cluster through l, its
// random sources derived from seed.
func NewCollector(l Lister, seed uint64) *Collector {
	return &Collector{lister: l, now: time.Now, sim: NewSimulator(seed), descs: map[string]*prometheus.Desc{}}
}

// Describe sends nothing: the metric names come from the pods' opt-ins,
// known only at scrape time, which makes this an unchecked collector.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect lists the cluster, advances the simulation and sends one
// histogram per opted-in pod. If the cluster cannot be listed the scrape
// fails as a whole, so that Prometheus marks the target down instead of
// recording the pods as gone.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	nodes, err := c.lister.Nodes(ctx)
	if err == nil {
		var pods []corev1.Pod
		if pods, err = c.lister.Pods(ctx); err == nil {
			c.collect(ch, Loads(nodes, pods))
			return
		}
	}
	ch <- prometheus.NewInvalidMetric(errorDesc, fmt.Errorf("latencysim: %w", err))
}

func (c *Collector) collect(ch chan<- prometheus.Metric, loads []PodLoad) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.sim.Advance(loads, c.now()) {
		ch <- prometheus.MustNewConstHistogram(c.desc(h.Metric), h.Count, h.Sum, h.Buckets, h.Namespace, h.Pod)
	}
}

// desc is the descriptor of a histogram name, made once.
func (c *Collector) desc(name string) *prometheus.Desc {
	d, ok := c.descs[name]
	if !ok {
		d = prometheus.NewDesc(name, "Duration of HTTP server requests, in seconds. SIMULATED by backfill dev's latencysim.", labelNames, nil)
		c.descs[name] = d
	}
	return d
}

// NewServer returns an HTTP server for addr (use a 127.0.0.1 address) that
// serves the simulated histograms of the cluster l lists at MetricsPath,
// on a registry of their own. The caller starts the server and shuts it
// down.
func NewServer(addr string, l Lister, seed uint64) *http.Server {
	return &http.Server{Addr: addr, Handler: Handler(l, seed), ReadHeaderTimeout: 5 * time.Second}
}

// Handler serves the simulated histograms at MetricsPath, and at "/" a
// line saying what this is.
func Handler(l Lister, seed uint64) http.Handler { return handlerFor(NewCollector(l, seed)) }

// handlerFor serves c's histograms, on a registry of their own, so that
// nothing else a process registers leaks into the scrape.
func handlerFor(c *Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintf(w, "backfill latencysim: SIMULATED request latency of the local cluster's online pods; metrics at %s\n", MetricsPath)
	})
	return mux
}
