package doctor

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/dashboards"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// The cockpit panels that keep offline pods only, and those that show GPU
// utilisation, by name; checkPanels tells them apart by their queries.
var (
	offlineOnlyPanels = []string{
		`stat panel "Offline CPU used"`,
		`panel "CPU by tier" series "offline used"`,
		`panel "CPU: online requested, online used, reclaimable, offline used" series "offline used"`,
		`panel "Memory: online requested, online used, reclaimable, offline holds, offline used" series "offline used"`,
		`node watermarks column "CPU used offline"`,
		`node watermarks column "Mem used offline"`,
	}
	gpuPanels = []string{
		`stat panel "GPU utilisation of training pods"`,
		`panel "GPU utilisation per TFJob pod"`,
	}
)

// variable is a Grafana variable left in a query; label_replace's $1 is not.
var variable = regexp.MustCompile(`\$(\{|[A-Za-z_])`)

func TestCockpitPanels(t *testing.T) {
	panels := CockpitPanels()
	p := parser.NewParser(parser.Options{})
	names := map[string]bool{}
	var offline, gpu []string
	for _, panel := range panels {
		if names[panel.Name] {
			t.Errorf("two queries are named %s", panel.Name)
		}
		names[panel.Name] = true
		if variable.MatchString(panel.Expr) {
			t.Errorf("%s: a variable is left in %s", panel.Name, panel.Expr)
		}
		if _, err := p.ParseExpr(panel.Expr); err != nil {
			t.Errorf("%s does not parse: %v\n%s", panel.Name, err, panel.Expr)
		}
		switch {
		case readsGPUs(panel):
			gpu = append(gpu, panel.Name)
		case needsOfflinePods(panel):
			offline = append(offline, panel.Name)
		}
	}
	if diff := cmp.Diff(offlineOnlyPanels, offline); diff != "" {
		t.Errorf("panels of offline pods only (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(gpuPanels, gpu); diff != "" {
		t.Errorf("GPU panels (-want +got):\n%s", diff)
	}
}

// CockpitPanels runs every query of the cockpit's JSON, as Grafana loads
// it, but for the panels cockpitUnchecked leaves out; each of those is a
// panel of the cockpit, and says why it is left out.
func TestCockpitPanelsCoverTheCockpit(t *testing.T) {
	built, err := dashboards.Cockpit()
	if err != nil {
		t.Fatal(err)
	}
	model, err := dashboards.ProvisionedJSON(built)
	if err != nil {
		t.Fatal(err)
	}
	queries, err := dashboards.QueriesOf(model)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{dashboards.VarNamespace: dashboards.AllValue, dashboards.VarTFJob: dashboards.AllValue,
		dashboards.VarNode: dashboards.AllValue, "__rate_interval": PanelRateWindow}
	// run counts the queries doctor runs by their text: panels share some.
	run := map[string]int{}
	for _, p := range CockpitPanels() {
		run[p.Expr]++
	}
	titles := map[string]bool{}
	for _, q := range queries {
		titles[q.PanelTitle] = true
		if _, unchecked := cockpitUnchecked[q.PanelTitle]; unchecked {
			continue
		}
		expr := dashboards.Substitute(q.Expr, values)
		if run[expr] == 0 {
			t.Errorf("panel %d %q query %s is not run by doctor, nor in cockpitUnchecked:\n%s", q.PanelID, q.PanelTitle, q.RefID, expr)
			continue
		}
		run[expr]--
	}
	for expr, n := range run {
		if n > 0 {
			t.Errorf("doctor runs %d query(s) that no panel of the cockpit has:\n%s", n, expr)
		}
	}
	for title, why := range cockpitUnchecked {
		if !titles[title] {
			t.Errorf("cockpitUnchecked names %q, which is no panel of the cockpit with queries", title)
		}
		if why == "" {
			t.Errorf("cockpitUnchecked leaves %q out without saying why", title)
		}
	}
}

// allData is every cockpit panel with one series, but for those named in
// empty (no series) and failed (an error).
func allData(empty []string, failed ...string) map[string]PanelData {
	data := map[string]PanelData{}
	for _, p := range CockpitPanels() {
		switch {
		case slices.Contains(empty, p.Name):
			data[p.Name] = PanelData{}
		case slices.Contains(failed, p.Name):
			data[p.Name] = PanelData{Err: errors.New("bad_data: parse error")}
		default:
			data[p.Name] = PanelData{Series: 1}
		}
	}
	return data
}

func each(names []string, status Status) []verdict {
	var out []verdict
	for _, n := range names {
		out = append(out, verdict{CheckPrometheusData, status, n})
	}
	return out
}

func TestCheckPanels(t *testing.T) {
	offlineCPU := offlineOnlyPanels[0]
	cases := map[string]struct {
		data        map[string]PanelData
		offlinePods int
		gpuNodes    int
		want        []verdict
		wantFinding string
	}{
		"every panel has data": {
			data: allData(nil), offlinePods: 2, gpuNodes: 1,
			want: []verdict{{CheckPrometheusData, StatusOK, ""}}, wantFinding: fmt.Sprintf("all %d queries", len(CockpitPanels())),
		},
		"no GPU panel data on a cluster without GPUs": {
			data: allData(gpuPanels), offlinePods: 2,
			want: []verdict{{CheckPrometheusData, StatusOK, ""}}, wantFinding: "as expected on a cluster without GPUs",
		},
		"no GPU panel data on a cluster with GPUs": {
			data: allData(gpuPanels), offlinePods: 2, gpuNodes: 1,
			want: each(gpuPanels, StatusWarn),
		},
		"offline panels empty while no offline pod runs": {
			data: allData(offlineOnlyPanels), gpuNodes: 1,
			want: each(offlineOnlyPanels, StatusWarn),
		},
		"offline CPU empty although offline pods run": {
			data: allData([]string{offlineCPU}), offlinePods: 2, gpuNodes: 1,
			want: each([]string{offlineCPU}, StatusFail), wantFinding: "returns no data",
		},
		"a query fails": {
			data: allData(nil, `stat panel "GPUs free"`), offlinePods: 2, gpuNodes: 1,
			want: each([]string{`stat panel "GPUs free"`}, StatusFail), wantFinding: "bad_data",
		},
		"a panel not asked": {
			data: map[string]PanelData{}, offlinePods: 2, gpuNodes: 1,
			want: each(panelNames(), StatusFail),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := checkPanels(CockpitPanels(), tc.data, tc.offlinePods, tc.gpuNodes)
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if tc.wantFinding != "" && !strings.Contains(got[0].Finding, tc.wantFinding) {
				t.Errorf("finding %q, want it to contain %q", got[0].Finding, tc.wantFinding)
			}
		})
	}
}

func panelNames() []string {
	var out []string
	for _, p := range CockpitPanels() {
		out = append(out, p.Name)
	}
	return out
}

// managerSeries is one series the manager exports, with its own labels.
type managerSeries struct {
	metric string
	labels map[string]string
	value  string
}

// load writes s in promqltest's load syntax as Prometheus stores it when
// it scrapes the manager through a ServiceMonitor: the Prometheus Operator
// gives the target namespace, pod, service, container and endpoint labels;
// with honor_labels the manager's own labels win, without it the target's
// do and the manager's are renamed exported_*.
func (s managerSeries) load(honored bool) string {
	l := map[string]string{
		"job": "backfill-manager-metrics", "namespace": "backfill-system", "pod": "backfill-manager-7d9f-abcde",
		"service": "backfill-manager-metrics", "container": "manager", "endpoint": "metrics",
	}
	for k, v := range s.labels {
		if _, clash := l[k]; clash && !honored {
			l["exported_"+k] = v
			continue
		}
		l[k] = v
	}
	pairs := make([]string, 0, len(l))
	for k, v := range l {
		pairs = append(pairs, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(pairs)
	return s.metric + "{" + strings.Join(pairs, ",") + "} " + s.value
}

// managerState is a node-0 with an online pod and the offline pod
// team-a/mnist-ps-0, and a gpu-node-0 with the offline pod
// team-a/mnist-worker-0 holding its GPU, as the manager reports them:
// with the reclaimed capacity each publishes and offline pods hold, and
// its counters of evictions and of the online signal's actions at 0, as
// it starts them.
func managerState() []managerSeries {
	var out []managerSeries
	add := func(metric, value string, kv ...string) {
		l := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		out = append(out, managerSeries{metric, l, value})
	}
	for _, node := range []string{"node-0", "gpu-node-0"} {
		gpus := map[string]string{"node-0": "0x40", "gpu-node-0": "1x40"}[node]
		add("backfill_node_allocatable", "8x40", "node", node, "resource", "cpu")
		add("backfill_node_allocatable", "32000000000x40", "node", node, "resource", "memory")
		add("backfill_node_allocatable", gpus, "node", node, "resource", "nvidia_com_gpu")
		for _, tier := range []string{"online", "offline"} {
			for _, res := range []string{"cpu", "memory", "nvidia_com_gpu"} {
				add("backfill_node_requests", "1x40", "node", node, "tier", tier, "resource", res)
			}
			for _, qos := range []string{"Guaranteed", "Burstable", "BestEffort"} {
				add("backfill_node_pods", "1x40", "node", node, "tier", tier, "qos_class", qos)
			}
		}
		for _, res := range metrics.BatchResources {
			add(metrics.NameNodeBatchAllocatable, "2x40", "node", node, "resource", res)
			add(metrics.NameNodeBatchAllocated, "1x40", "node", node, "resource", res)
		}
	}
	for _, res := range metrics.BatchResources {
		for _, result := range []string{metrics.EvictionEvicted, metrics.EvictionRefused} {
			add(metrics.NameReclaimEvictions, "0x40", "resource", res, "result", result)
		}
	}
	for _, action := range metrics.OnlineActions {
		add(metrics.NameReclaimOnlineActed, "0x40", "action", action)
	}
	add(expr.MetricOfflinePodInfo, "1x40", "namespace", "team-a", "pod", "mnist-worker-0", "node", "gpu-node-0", "tfjob", "mnist", "replica_type", "worker")
	add(expr.MetricOfflinePodInfo, "1x40", "namespace", "team-a", "pod", "mnist-ps-0", "node", "node-0", "tfjob", "mnist", "replica_type", "ps")
	return out
}

// kubeletAndDCGM are the kubelet's usage series of both pods and
// dcgm-exporter's utilisation of the offline pod's GPU, as
// kube-prometheus-stack scrapes them.
const kubeletAndDCGM = `  container_cpu_usage_seconds_total{namespace="shop",pod="web-0",container="web",node="node-0"} 0+7.5x40
  container_cpu_usage_seconds_total{namespace="team-a",pod="mnist-worker-0",container="tensorflow",node="gpu-node-0"} 0+30x40
  container_memory_working_set_bytes{namespace="shop",pod="web-0",container="web",node="node-0"} 300000000x40
  container_memory_working_set_bytes{namespace="team-a",pod="mnist-worker-0",container="tensorflow",node="gpu-node-0"} 4000000000x40
  container_cpu_usage_seconds_total{namespace="team-a",pod="mnist-ps-0",container="tensorflow",node="node-0"} 0+3x40
  container_memory_working_set_bytes{namespace="team-a",pod="mnist-ps-0",container="tensorflow",node="node-0"} 1000000000x40
  DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",exported_namespace="team-a",exported_pod="mnist-worker-0",exported_container="tensorflow",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 40x40
`

// TestCheckPanelsOnPrometheusSeries runs the cockpit's queries on the
// series of a kube-prometheus-stack cluster with Prometheus's engine:
// with the manager scraped with honorLabels every panel has data; without
// it the joins on namespace and pod find nothing, or find both offline
// pods under the manager's own name, and the panels FAIL by name.
func TestCheckPanelsOnPrometheusSeries(t *testing.T) {
	cases := map[string]struct {
		honored bool
		want    []verdict
	}{
		"honorLabels: true": {honored: true, want: []verdict{{CheckPrometheusData, StatusOK, ""}}},
		// Every panel that joins the manager's series with the kubelet's
		// or dcgm-exporter's on namespace and pod, in panel order.
		"honorLabels: false": {honored: false, want: each(slices.DeleteFunc(panelNames(), func(name string) bool {
			return !slices.Contains(offlineOnlyPanels, name) && !slices.Contains(gpuPanels, name)
		}), StatusFail)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			input := "load 15s\n" + kubeletAndDCGM
			for _, s := range managerState() {
				input += "  " + s.load(tc.honored) + "\n"
			}
			storage := promqltest.LoadedStorage(t, input)
			engine := promqltest.NewTestEngine(t, false, 0, 100000)
			at := time.Unix(0, 0).Add(8 * time.Minute)
			count := func(q string) (int, error) {
				query, err := engine.NewInstantQuery(context.Background(), storage, nil, q, at)
				if err != nil {
					return 0, err
				}
				defer query.Close()
				res := query.Exec(context.Background())
				if res.Err != nil {
					return 0, res.Err
				}
				v, err := res.Vector()
				return len(v), err
			}
			offlinePods, err := count(expr.OfflinePods())
			if err != nil || offlinePods != 2 {
				t.Fatalf("offline pods: %d, %v; want 2 whichever the labels", offlinePods, err)
			}
			data := map[string]PanelData{}
			for _, p := range CockpitPanels() {
				n, err := count(p.Expr)
				data[p.Name] = PanelData{Series: n, Err: err}
			}
			got := checkPanels(CockpitPanels(), data, offlinePods, 1)
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s\nresults: %+v", diff, got)
			}
		})
	}
}
