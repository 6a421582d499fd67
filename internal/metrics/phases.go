package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// listTimeout bounds the cache read of one scrape.
const listTimeout = 5 * time.Second

// jobPhases is the backfill_tfjobs gauge.
var jobPhases = &phaseCollector{desc: prometheus.NewDesc(NameJobs,
	"TFJobs by namespace and phase: the job's state, the type of its last condition as `kubectl get tfjobs` shows it, or Pending before any.",
	[]string{"namespace", "phase"}, nil)}

// phaseCollector counts the TFJobs of the manager's cache, and the retired
// ones the cache leaves out, by namespace and phase at every scrape. It
// reports nothing until its sources are set and ready and the manager
// leads, so that the replicas of a manager do not report the same jobs
// twice, nor a new leader too few.
type phaseCollector struct {
	desc *prometheus.Desc

	mu      sync.Mutex
	reader  client.Reader
	retired *retiredJobs
	leading <-chan struct{}
}

// use sets where the collector reads jobs from (retired may be nil: none
// are), and the channel closed once the manager leads.
func (c *phaseCollector) use(reader client.Reader, retired *retiredJobs, leading <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reader, c.retired, c.leading = reader, retired, leading
}

// Describe implements prometheus.Collector.
func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
}

// Collect implements prometheus.Collector. Every namespace with a job gets
// a series for every phase, zeros included.
func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader, retired, leading := c.reader, c.retired, c.leading
	c.mu.Unlock()
	if reader == nil || !closed(leading) {
		return
	}
	counts := map[string]map[string]int{}
	if retired != nil {
		var synced bool
		if counts, synced = retired.counts(); !synced {
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	var jobs kubeflowv1.TFJobList
	// The cache's own objects, read only: no copy per scrape.
	if err := reader.List(ctx, &jobs, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.Log.WithName("metrics").Error(err, "Listing TFJobs for "+NameJobs)
		return
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if counts[job.Namespace] == nil {
			counts[job.Namespace] = map[string]int{}
		}
		counts[job.Namespace][phaseLabel(state(&job.Status))]++
	}
	for ns, byPhase := range counts {
		for _, phase := range Phases {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(byPhase[phase]), ns, phase)
		}
		if n := byPhase[PhaseUnknown]; n > 0 {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), ns, PhaseUnknown)
		}
	}
}

// closed reports whether ch is closed; a nil channel never is.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
