package doctor

import (
	"errors"
	"fmt"
	"strings"

	"github.com/backfill-dev/backfill/internal/observability/dashboards"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// CockpitPanel is one query of the co-location cockpit, as `backfill top`
// runs it: the dashboard's variables substituted for the whole cluster.
type CockpitPanel struct {
	// Name is the panel as Grafana titles it, e.g. `stat panel "GPUs free"`.
	Name string
	Expr string
}

// PanelRateWindow stands for Grafana's $__rate_interval: several scrapes
// even at a 1m scrape interval.
const PanelRateWindow = expr.DefaultRateWindow

// CockpitPanels are every query of the cockpit: its Stat panels, the two
// library panels and the columns of the node watermark table.
func CockpitPanels() []CockpitPanel {
	values := map[string]string{
		dashboards.VarNamespace: dashboards.AllValue,
		dashboards.VarTFJob:     dashboards.AllValue,
		"__rate_interval":       PanelRateWindow,
	}
	var out []CockpitPanel
	add := func(name, query string) {
		out = append(out, CockpitPanel{Name: name, Expr: dashboards.Substitute(query, values)})
	}
	for _, f := range dashboards.CockpitFigures() {
		add(fmt.Sprintf("stat panel %q", f.Title), f.Query.Expr)
	}
	for _, q := range dashboards.CPUByTier() {
		add(fmt.Sprintf("panel \"CPU by tier\" series %q", q.Legend), q.Expr)
	}
	add(`panel "GPU utilisation per TFJob pod"`, dashboards.GPUUtilByTFJobPod().Expr)
	for _, c := range dashboards.WatermarkColumns() {
		add(fmt.Sprintf("node watermarks column %q", c.Name), c.Expr)
	}
	return out
}

// PanelData is what one cockpit query returned.
type PanelData struct {
	Series int
	// Err is set when Prometheus refused or did not answer the query.
	Err error
}

// readsGPUs: the panel shows dcgm-exporter's utilisation, which exists only
// on GPU nodes and for pods holding a GPU.
func readsGPUs(p CockpitPanel) bool { return strings.Contains(p.Expr, expr.MetricGPUUtil) }

// needsOfflinePods: the panel keeps only the series of offline pods, so it
// is empty while none runs.
func needsOfflinePods(p CockpitPanel) bool {
	return strings.Contains(p.Expr, " and on (namespace, pod) ")
}

// honorLabelsHint is the usual cause of a panel without data although its
// inputs are scraped: the manager scraped without honorLabels, so its
// namespace and pod labels arrive as exported_namespace and exported_pod
// and no join with the kubelet's series matches.
const honorLabelsHint = "run its query in Prometheus and drop one part at a time to find the empty one; " +
	"if backfill_offline_pod_info carries exported_namespace/exported_pod, set honorLabels: true on the manager's ServiceMonitor or PodMonitor"

// checkPanels says, for each cockpit panel, whether its query returns
// data, as one OK line when all do. offlinePods is the number of offline
// pods Prometheus knows of; gpuNodes the nodes with nvidia.com/gpu.
func checkPanels(panels []CockpitPanel, data map[string]PanelData, offlinePods, gpuNodes int) []Result {
	var out []Result
	withData, gpuExpected := 0, 0
	for _, p := range panels {
		d, asked := data[p.Name]
		switch {
		case !asked || d.Err != nil:
			err := d.Err
			if !asked {
				err = errors.New("not run")
			}
			out = append(out, Result{Check: CheckPrometheusData, Status: StatusFail, Object: p.Name,
				Finding: fmt.Sprintf("the cockpit's %s query failed: %v", p.Name, err),
				Fix: "if Prometheus refused the join (found duplicate series, many-to-many matching), " + honorLabelsHint +
					"; otherwise check the Prometheus URL and that Prometheus answers /api/v1/query. The query is " + p.Expr})
		case d.Series > 0:
			withData++
		case readsGPUs(p) && gpuNodes == 0:
			gpuExpected++
		case readsGPUs(p):
			out = append(out, Result{Check: CheckPrometheusData, Status: StatusWarn, Object: p.Name,
				Finding: fmt.Sprintf("the cockpit's %s returns no data: no offline pod's GPU has a utilisation series", p.Name),
				Fix: "expected while no TFJob pod holds a GPU; otherwise check that dcgm-exporter runs on the GPU nodes " +
					"and labels each GPU with the pod using it (pod or exported_pod)"})
		case needsOfflinePods(p) && offlinePods == 0:
			out = append(out, Result{Check: CheckPrometheusData, Status: StatusWarn, Object: p.Name,
				Finding: fmt.Sprintf("the cockpit's %s returns no data: Prometheus knows of no offline pod (backfill_offline_pod_info)", p.Name),
				Fix:     "expected until a TFJob's pods run; if they do, check the manager's target (see prometheus-targets)"})
		default:
			out = append(out, Result{Check: CheckPrometheusData, Status: StatusFail, Object: p.Name,
				Finding: fmt.Sprintf("the cockpit's %s returns no data: it shows No data in Grafana and in backfill top", p.Name),
				Fix:     honorLabelsHint})
		}
	}
	if len(out) == 0 {
		finding := fmt.Sprintf("all %d queries of the co-location cockpit return data", withData)
		if gpuExpected > 0 {
			finding = fmt.Sprintf("%d queries of the co-location cockpit return data; its %d GPU queries none, as expected on a cluster without GPUs", withData, gpuExpected)
		}
		out = append(out, ok(CheckPrometheusData, finding))
	}
	return out
}
