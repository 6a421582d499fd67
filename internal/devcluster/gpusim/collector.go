package gpusim

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names, as dcgm-exporter's default counters publish them.
const (
	MetricGPUUtil        = "DCGM_FI_DEV_GPU_UTIL"
	MetricFBUsed         = "DCGM_FI_DEV_FB_USED"
	MetricFBFree         = "DCGM_FI_DEV_FB_FREE"
	MetricGPUTemp        = "DCGM_FI_DEV_GPU_TEMP"
	MetricPowerUsage     = "DCGM_FI_DEV_POWER_USAGE"
	MetricGrEngineActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
)

// labelNames is dcgm-exporter's label set, in its order: the GPU's identity,
// then the pod container it is allocated to (empty values for a free GPU,
// which dcgm-exporter also publishes). Newer dcgm-exporter builds also have
// pci_bus_id and DCGM_FI_DRIVER_VERSION, and some spell Hostname in lower
// case; dashboards should key on neither.
var labelNames = []string{"gpu", "UUID", "device", "modelName", "Hostname", "container", "namespace", "pod"}

// listTimeout bounds the listing done for one scrape, well inside the
// scrape timeout of the local Prometheus.
const listTimeout = 3 * time.Second

// metric is one published gauge and how to read it off a GPU.
type metric struct {
	desc  *prometheus.Desc
	value func(GPU) float64
}

func gauge(name, help string, value func(GPU) float64) metric {
	return metric{desc: prometheus.NewDesc(name, help+" SIMULATED by backfill dev's gpusim.", labelNames, nil), value: value}
}

// metrics are the published gauges, with dcgm-exporter's help texts.
var metrics = []metric{
	gauge(MetricGPUUtil, "GPU utilization (in %).", func(g GPU) float64 { return g.Util }),
	gauge(MetricFBUsed, "Framebuffer memory used (in MiB).", func(g GPU) float64 { return g.FBUsedMiB }),
	gauge(MetricFBFree, "Framebuffer memory free (in MiB).", func(g GPU) float64 { return g.FBFreeMiB }),
	gauge(MetricGPUTemp, "GPU temperature (in C).", func(g GPU) float64 { return g.TempC }),
	gauge(MetricPowerUsage, "Power draw (in W).", func(g GPU) float64 { return g.PowerW }),
	gauge(MetricGrEngineActive, "Ratio of time the graphics engine is active.", func(g GPU) float64 { return g.GrEngineActive }),
}

// Collector is a prometheus.Collector publishing Snapshot of the cluster as
// Lister sees it at scrape time.
type Collector struct {
	lister Lister
	now    func() time.Time
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a Collector reading the cluster through l.
func NewCollector(l Lister) *Collector {
	return &Collector{lister: l, now: time.Now}
}

// Describe sends the descriptors of every published metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range metrics {
		ch <- m.desc
	}
}

// Collect lists the cluster and sends one sample per GPU and metric. If the
// cluster cannot be listed the scrape fails as a whole, so that Prometheus
// marks the target down instead of recording GPUs as vanished.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	gpus, err := c.snapshot()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(metrics[0].desc, err)
		return
	}
	for _, g := range gpus {
		labels := []string{strconv.Itoa(g.Index), g.UUID, g.Device, g.ModelName, g.Hostname, g.Container, g.Namespace, g.Pod}
		for _, m := range metrics {
			ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, m.value(g), labels...)
		}
	}
}

// snapshot lists the cluster and simulates its GPUs.
func (c *Collector) snapshot() ([]GPU, error) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	nodes, err := c.lister.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("gpusim: %w", err)
	}
	pods, err := c.lister.Pods(ctx)
	if err != nil {
		return nil, fmt.Errorf("gpusim: %w", err)
	}
	return Snapshot(nodes, pods, c.now()), nil
}
