package doctor

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"

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

// CockpitPanels are the queries of the cockpit doctor runs: every query
// of every panel of the cockpit as built (dashboards.Cockpit), in panel
// order, but for the panels of cockpitUnchecked.
func CockpitPanels() []CockpitPanel { return slices.Clone(cockpitPanels()) }

// cockpitUnchecked are the cockpit's panels, by title, whose queries
// doctor does not run, each with why: checkPanels judges an empty query
// by the offline pods and GPU nodes it knows of, and these are empty, as
// meant, on clusters it cannot tell from broken ones.
var cockpitUnchecked = map[string]string{
	"Training goodput": "it has data only once a TFJob exists (finished ones count too); checkPanels knows offline pods, not TFJobs",
	"Node agent on $node: offline CPU ceiling and CPU used":          nodeAgentOnly,
	"Online pods waiting for CPU (top 10)":                           nodeAgentOnly,
	"Offline CPU throttled by the node agent":                        nodeAgentOnly,
	"Memory evictions by the node agent":                             nodeAgentOnly,
	"P99 latency against the objective, per workload":                latencyOptIn,
	"P99 latency beside offline pods and without them, per workload": latencyOptIn,
	"GPUs held idle by online workloads":                             gpuIdleOnly,
	"Online GPUs idle for an hour, per workload":                     gpuIdleOnly,
	"GPUs lent to training now":                                      gpuLoanOnly,
	"Next return to online, in":                                      gpuLoanOnly + "; the next return only while a loan must end within the forecast",
	"GPUs lent to training, per pool":                                gpuLoanOnly,
	"Loans over the time range, per pool":                            gpuLoanOnly + "; it counts over Grafana's time range ($__range)",
	"Online pods waiting for a GPU training holds":                   gpuLoanOnly,
	"Online pods waiting for CPU, per node (top 10 of each)": "it needs the node agent or the kubelet's CPU pressure (cgroup v2, the KubeletPSI feature gate), " +
		"and its query of nodes with offline pods is empty while none runs any, that of the others while all do",
}

// Why cockpitUnchecked leaves panels out.
const (
	nodeAgentOnly = "its series come from the node agent, which is optional (check node-agent says whether it runs)"
	latencyOptIn  = "only workloads that declare backfill.dev/latency-objective have a P99, and only while they serve requests"
	gpuIdleOnly   = "it has data only while online pods hold GPUs (idle ones, but for the GPUs held column); check gpu-idle-online reads the same GPUs"
	gpuLoanOnly   = "its series exist only on clusters with GPU nodes, once the manager's GPU loans (--gpu-loans, on the leader) made a decision"
)

// cockpitPanels builds the cockpit once and reads its queries, the
// dashboard's variables substituted for the whole cluster.
var cockpitPanels = sync.OnceValue(func() []CockpitPanel {
	built, err := dashboards.Cockpit()
	if err != nil {
		panic(fmt.Sprintf("building the cockpit: %v", err)) // built from constants, and tested
	}
	values := map[string]string{
		dashboards.VarNamespace: dashboards.AllValue,
		dashboards.VarTFJob:     dashboards.AllValue,
		dashboards.VarNode:      dashboards.AllValue,
		"__rate_interval":       PanelRateWindow,
	}
	var out []CockpitPanel
	for _, p := range panelsOf(built.Dashboard.Panels) {
		if _, unchecked := cockpitUnchecked[titleOf(p)]; unchecked {
			continue
		}
		for _, t := range p.Targets {
			q, isProm := t.(prometheus.Dataquery)
			if !isProm {
				continue
			}
			out = append(out, CockpitPanel{Name: queryName(p, q), Expr: dashboards.Substitute(q.Expr, values)})
		}
	}
	return out
})

// panelsOf are the panels of a dashboard, those of collapsed rows too, in
// order.
func panelsOf(panels []dashboard.PanelOrRowPanel) []dashboard.Panel {
	var out []dashboard.Panel
	for _, p := range panels {
		switch {
		case p.Panel != nil:
			out = append(out, *p.Panel)
		case p.RowPanel != nil:
			out = append(out, p.RowPanel.Panels...)
		}
	}
	return out
}

func titleOf(p dashboard.Panel) string {
	if p.Title == nil {
		return ""
	}
	return *p.Title
}

// queryName names a query of a panel in findings: `stat panel "TITLE"`
// or `panel "TITLE"`, with ` series "LEGEND"` when the panel has several
// queries, and a table's queries as its columns.
func queryName(p dashboard.Panel, q prometheus.Dataquery) string {
	title, legend := titleOf(p), ""
	if q.LegendFormat != nil {
		legend = *q.LegendFormat
	}
	if p.Type == "table" {
		return fmt.Sprintf("%s column %q", strings.ToLower(title), legend)
	}
	kind := "panel"
	if p.Type == "stat" {
		kind = "stat panel"
	}
	name := fmt.Sprintf("%s %q", kind, title)
	if len(p.Targets) > 1 {
		name += fmt.Sprintf(" series %q", legend)
	}
	return name
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

// youngDataHint: a panel's rate() needs two samples of each input within
// its window, so a cluster, a Prometheus or a TFJob's pods younger than
// the window leave it empty for a while.
const youngDataHint = "if Prometheus, the manager or the TFJob pods it reads started less than " + PanelRateWindow +
	" ago, its rate() has too few samples yet: run doctor again in " + PanelRateWindow + "; otherwise "

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
				Fix:     youngDataHint + honorLabelsHint})
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
