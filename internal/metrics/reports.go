package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// NameReportJobs is the gauge of the jobs whose reported progress the
// leader holds.
const NameReportJobs = "backfill_report_jobs"

// reportJobs is backfill_report_jobs, read at scrape time from the
// progress store of the report endpoint (ReportedJobs); absent while the
// manager serves no reports.
var reportJobs = &heldJobs{desc: prometheus.NewDesc(NameReportJobs,
	"TFJobs whose reported progress the leader holds in memory to write it into their status: those that reported since it started and are still in its cache.",
	nil, nil)}

type heldJobs struct {
	desc  *prometheus.Desc
	mu    sync.Mutex
	count func() int
}

// ReportedJobs makes backfill_report_jobs count what count says: the
// jobs of the progress store, once the manager serves reports.
func ReportedJobs(count func() int) {
	reportJobs.mu.Lock()
	defer reportJobs.mu.Unlock()
	reportJobs.count = count
}

func (h *heldJobs) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h *heldJobs) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	count := h.count
	h.mu.Unlock()
	if count != nil {
		ch <- prometheus.MustNewConstMetric(h.desc, prometheus.GaugeValue, float64(count()))
	}
}
