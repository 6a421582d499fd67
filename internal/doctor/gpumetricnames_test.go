package doctor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestOldGPUNamesIn(t *testing.T) {
	cases := map[string]struct {
		query string
		want  []string
	}{
		"the seed's idle rule":       {query: "avg_over_time(nvidia_gpu_utilization[30m]) < 10", want: []string{"nvidia_gpu_utilization"}},
		"each name once, in order":   {query: "sum(dcgm_fb_used) / (sum(dcgm_fb_used) + sum(dcgm_fb_free))", want: []string{"dcgm_fb_used", "dcgm_fb_free"}},
		"with labels and a function": {query: `max by (gpu) (dcgm_gpu_temp{uuid=~"GPU-.*"}) > 85`, want: []string{"dcgm_gpu_temp"}},
		"a __name__ matcher":         {query: `{__name__="dcgm_power_usage", gpu="0"}`, want: []string{"dcgm_power_usage"}},
		"a Grafana variable query":   {query: "label_values(dcgm_gpu_utilization, gpu)", want: []string{"dcgm_gpu_utilization"}},
		"after a line comment":       {query: "# old: dcgm_sm_clock\ndcgm_memory_clock", want: []string{"dcgm_memory_clock"}},
		"a longer name":              {query: "nvidia_gpu_utilization_ratio + dcgm_fb_used_bytes", want: nil},
		"a name that ends with one":  {query: "my_dcgm_fb_used + job:dcgm_fb_free", want: nil},
		"the DCGM names":             {query: `DCGM_FI_DEV_GPU_UTIL{gpu="0"} * 1e3 + DCGM_FI_DEV_FB_USED offset 5m`, want: nil},
		"inside a longer string":     {query: `label_replace(up, "x", "dcgm_fb_used is gone", "", "")`, want: nil},
		"an escaped quote":           {query: `up{job="a\"dcgm_fb_used"}`, want: nil},
		"Grafana variables":          {query: `rate(x[$__rate_interval]) * $dcgm_sm_clock + ${dcgm_gpu_temp}`, want: nil},
		"a comment only":             {query: "up # dcgm_power_usage", want: nil},
		"an unclosed string":         {query: `up{job="dcgm_fb_used`, want: []string{"dcgm_fb_used"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, oldGPUNamesIn(tc.query)); diff != "" {
				t.Errorf("oldGPUNamesIn(%q) (-want +got):\n%s", tc.query, diff)
			}
		})
	}
}

func TestGPUNamesInRule(t *testing.T) {
	spec := map[string]any{"groups": []any{
		map[string]any{"name": "gpu", "rules": []any{
			map[string]any{"alert": "GPUIdleLongTime", "expr": "avg_over_time(nvidia_gpu_utilization[30m]) < 10", "for": "30m"},
			map[string]any{"record": "gpu:fb_used:sum", "expr": "sum(dcgm_fb_used)"},
			map[string]any{"alert": "GPUHot", "expr": "DCGM_FI_DEV_GPU_TEMP > 85"},
			map[string]any{"expr": "dcgm_power_usage > 300"},
			map[string]any{"alert": "NoExpr"},
			map[string]any{"alert": "Number", "expr": int64(1)},
		}},
		"not a group",
	}}
	want := []gpuNameUse{
		{Where: "alert GPUIdleLongTime", Name: "nvidia_gpu_utilization"},
		{Where: "recording rule gpu:fb_used:sum", Name: "dcgm_fb_used"},
		{Where: "group gpu, rule 4", Name: "dcgm_power_usage"},
	}
	if diff := cmp.Diff(want, gpuNamesInRule(spec)); diff != "" {
		t.Errorf("gpuNamesInRule (-want +got):\n%s", diff)
	}
	if got := gpuNamesInRule(nil); got != nil {
		t.Errorf("gpuNamesInRule(nil) = %v, want nothing", got)
	}
}

// A dashboard as Grafana exports it: panels, a collapsed row holding its
// panels, an old-style rows list, a library panel's model and variables
// whose query is a string or an object.
const oldNamesDashboard = `{
  "title": "GPUs",
  "panels": [
    {"type": "timeseries", "title": "Utilisation", "targets": [{"expr": "avg(DCGM_FI_DEV_GPU_UTIL)"}, {"expr": "avg(nvidia_gpu_utilization) * 100"}]},
    {"type": "row", "title": "Memory", "collapsed": true, "panels": [
      {"type": "timeseries", "title": "FB used", "targets": [{"expr": "sum by (gpu) (dcgm_fb_used) * 1048576"}]},
      {"type": "stat", "targets": [{"expr": "dcgm_fb_free"}]}
    ]}
  ],
  "rows": [{"title": "Clocks", "panels": [{"title": "SM clock", "targets": [{"expr": "dcgm_sm_clock"}]}]}],
  "templating": {"list": [
    {"name": "gpu", "query": "label_values(dcgm_gpu_temp, gpu)", "definition": "label_values(dcgm_gpu_temp, gpu)"},
    {"name": "node", "query": {"query": "label_values(dcgm_power_usage, Hostname)", "refId": "A"}},
    {"name": "interval", "query": "1m,5m"}
  ]}
}`

func TestGPUNamesInDashboard(t *testing.T) {
	got, ok := gpuNamesInDashboard(oldNamesDashboard)
	if !ok {
		t.Fatal("the dashboard was not read as JSON")
	}
	want := []gpuNameUse{
		{Where: `panel "Utilisation"`, Name: "nvidia_gpu_utilization"},
		{Where: `panel "FB used"`, Name: "dcgm_fb_used"},
		{Where: "an untitled panel", Name: "dcgm_fb_free"},
		{Where: `panel "SM clock"`, Name: "dcgm_sm_clock"},
		{Where: "variable $gpu", Name: "dcgm_gpu_temp"},
		{Where: "variable $node", Name: "dcgm_power_usage"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gpuNamesInDashboard (-want +got):\n%s", diff)
	}

	wrapped, ok := gpuNamesInDashboard(`{"dashboard": {"panels": [{"title": "Power", "targets": [{"expr": "dcgm_power_usage"}]}]}}`)
	if !ok || len(wrapped) != 1 || wrapped[0].Where != `panel "Power"` {
		t.Errorf("a dashboard wrapped as Grafana's API returns it: got %v, %v", wrapped, ok)
	}
	if _, ok := gpuNamesInDashboard("dcgm_fb_used: not a dashboard"); ok {
		t.Error("a value that is not JSON was read as a dashboard")
	}
}

func prometheusRule(namespace, name string, rules ...map[string]any) unstructured.Unstructured {
	list := make([]any, 0, len(rules))
	for _, r := range rules {
		list = append(list, r)
	}
	u := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
		"spec": map[string]any{"groups": []any{map[string]any{"name": "gpu", "rules": list}}},
	}}
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func dashboardConfigMap(namespace, name string, data map[string]string) corev1.ConfigMap {
	return corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{GrafanaDashboardLabel: "1"}},
		Data:       data,
	}
}

func TestCheckGPUMetricNames(t *testing.T) {
	idle := prometheusRule("monitoring", "gpu-alerts",
		map[string]any{"alert": "GPUIdleLongTime", "expr": "avg_over_time(nvidia_gpu_utilization[30m]) < 10", "for": "30m"},
		map[string]any{"alert": "GPUIdleShortTime", "expr": "avg_over_time(nvidia_gpu_utilization[5m]) < 1"})
	good := prometheusRule("monitoring", "backfill", map[string]any{"alert": "GPUIdle", "expr": "DCGM_FI_DEV_GPU_UTIL < 10"})
	oldDashboard := dashboardConfigMap("monitoring", "gpu-dashboard", map[string]string{"gpus.json": oldNamesDashboard, "README": "not JSON"})
	goodDashboard := dashboardConfigMap("grafana", "gpu-now", map[string]string{"gpus.json": `{"panels": [{"title": "FB", "targets": [{"expr": "DCGM_FI_DEV_FB_USED"}]}]}`})

	type want struct {
		verdict
		findings []string
		fix      []string
	}
	cases := map[string]struct {
		view      GPUQueriesView
		forbidden map[string]bool
		want      []want
	}{
		"old names in a rule and a dashboard": {
			view: GPUQueriesView{RulesServed: true, Rules: []unstructured.Unstructured{idle, good},
				Dashboards: []corev1.ConfigMap{oldDashboard, goodDashboard}},
			want: []want{
				{verdict: verdict{CheckGPUMetricNames, StatusWarn, "prometheusrule monitoring/gpu-alerts"},
					findings: []string{
						"PrometheusRule monitoring/gpu-alerts queries GPU metric names no exporter emits, so its alerts never fire",
						"nvidia_gpu_utilization (in alert GPUIdleLongTime, alert GPUIdleShortTime): use DCGM_FI_DEV_GPU_UTIL (percent, 0–100; no mainstream exporter emits this name",
						"so a threshold written for 0–1 must be multiplied by 100",
					},
					fix: []string{"kubectl -n monitoring edit prometheusrule gpu-alerts", "docs/observability.md#gpu-metric-names", "gpu, UUID, device, modelName and Hostname", "exported_pod"}},
				{verdict: verdict{CheckGPUMetricNames, StatusWarn, "configmap monitoring/gpu-dashboard"},
					findings: []string{
						"Grafana dashboard ConfigMap monitoring/gpu-dashboard queries GPU metric names no exporter emits, so those panels show No data",
						`nvidia_gpu_utilization (in gpus.json, panel "Utilisation"): use DCGM_FI_DEV_GPU_UTIL`,
						`dcgm_fb_used (in gpus.json, panel "FB used"): use DCGM_FI_DEV_FB_USED (MiB; not bytes: multiply by 1048576 to get bytes)`,
						"dcgm_sm_clock (in gpus.json, panel \"SM clock\"): use DCGM_FI_DEV_SM_CLOCK (MHz; same scale)",
						"dcgm_gpu_temp (in gpus.json, variable $gpu): use DCGM_FI_DEV_GPU_TEMP",
					},
					fix: []string{"kubectl -n monitoring edit configmap gpu-dashboard"}},
			},
		},
		"only current names": {
			view: GPUQueriesView{RulesServed: true, Rules: []unstructured.Unstructured{good}, Dashboards: []corev1.ConfigMap{goodDashboard}},
			want: []want{{verdict: verdict{CheckGPUMetricNames, StatusOK, ""}, findings: []string{
				"no PrometheusRule or Grafana dashboard queries a GPU metric name no exporter emits (scanned 1 PrometheusRule(s) and 1 ConfigMap(s) labelled grafana_dashboard)",
			}}},
		},
		"no Prometheus Operator": {
			view: GPUQueriesView{Dashboards: []corev1.ConfigMap{goodDashboard}},
			want: []want{{verdict: verdict{CheckGPUMetricNames, StatusOK, ""}, findings: []string{
				"(scanned 1 ConfigMap(s) labelled grafana_dashboard; the cluster serves no PrometheusRules)",
			}}},
		},
		"rules refused, dashboards read": {
			view:      GPUQueriesView{RulesServed: true, Dashboards: []corev1.ConfigMap{oldDashboard}},
			forbidden: map[string]bool{readPrometheusRules: true},
			want: []want{
				{verdict: verdict{CheckGPUMetricNames, StatusWarn, "configmap monitoring/gpu-dashboard"}},
				{verdict: verdict{CheckGPUMetricNames, StatusSkip, ""},
					findings: []string{"cannot read prometheusrules.monitoring.coreos.com in every namespace, so the GPU metric names they query were not checked"},
					fix:      []string{"bind you the ClusterRole backfill-cluster-view", "get and list prometheusrules.monitoring.coreos.com in every namespace"}},
			},
		},
		"dashboards refused, no Prometheus Operator": {
			forbidden: map[string]bool{readDashboards: true},
			want: []want{{verdict: verdict{CheckGPUMetricNames, StatusSkip, ""},
				findings: []string{"cannot read configmaps in every namespace"},
				fix:      []string{"bind you the ClusterRole backfill-cluster-view"}}},
		},
		"both refused": {
			view:      GPUQueriesView{RulesServed: true},
			forbidden: map[string]bool{readPrometheusRules: true, readDashboards: true},
			want: []want{{verdict: verdict{CheckGPUMetricNames, StatusSkip, ""},
				fix: []string{"bind you the ClusterRole backfill-cluster-view", "prometheusrules.monitoring.coreos.com in every namespace and configmaps in every namespace"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.GPUQueries, s.Forbidden = tc.view, tc.forbidden
			got := checkGPUMetricNames(s)
			wantVerdicts := make([]verdict, 0, len(tc.want))
			for _, w := range tc.want {
				wantVerdicts = append(wantVerdicts, w.verdict)
			}
			if diff := cmp.Diff(wantVerdicts, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s\n%+v", diff, got)
			}
			for i, w := range tc.want {
				wantTexts(t, got[i], w.findings, w.fix)
			}
		})
	}
}
