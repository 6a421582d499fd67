//go:build integration

package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/test/framework"
)

// monitoringOn renders the real chart, with its generated files, with
// every monitoring object of the kustomize tree on, and the full alert
// profile, which config/monitoring installs.
func monitoringOn(t *testing.T) []*unstructured.Unstructured {
	return decode(t, helmTemplate(t, valueSets["default"], "--set", "monitoring.serviceMonitor.enabled=true",
		"--set", "monitoring.prometheusRule.enabled=true", "--set", "monitoring.dashboards.enabled=true", "--set", "alerting.profile=full"))
}

// The chart's PrometheusRule holds exactly the groups of its generated
// files/backfill.rules.yaml, and each generated dashboard becomes a
// ConfigMap labelled for Grafana's sidecar whose data is the file.
func TestChartMonitoringFiles(t *testing.T) {
	objs := byKey(t, monitoringOn(t))
	files := filepath.Join(chartDir(), "files")

	var want map[string]any
	data, err := os.ReadFile(filepath.Join(files, "backfill.rules.yaml"))
	if err != nil {
		t.Fatalf("The chart's generated rules (run `make generate`): %v", err)
	}
	if err := yaml.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	rule, ok := objs["PrometheusRule "+namespace+"/backfill"]
	if !ok {
		t.Fatalf("No PrometheusRule backfill among %v", keysOf(objs))
	}
	if diff := cmp.Diff(want["groups"], rule.Object["spec"].(map[string]any)["groups"]); diff != "" {
		t.Errorf("The PrometheusRule's groups differ from files/backfill.rules.yaml (-file +rendered):\n%s", diff)
	}
	if got := rule.GetLabels()["release"]; got != "kube-prometheus-stack" {
		t.Errorf("PrometheusRule label release = %q, want kube-prometheus-stack", got)
	}

	dashboards, err := filepath.Glob(filepath.Join(files, "dashboards", "*.json"))
	if err != nil || len(dashboards) == 0 {
		t.Fatalf("The chart's generated dashboards (run `make generate`): %v, %d files", err, len(dashboards))
	}
	for _, path := range dashboards {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		key := "ConfigMap " + namespace + "/backfill-" + strings.TrimPrefix(name, "backfill-") + "-dashboard"
		cm, ok := objs[key]
		if !ok {
			t.Errorf("No %s for %s", key, path)
			continue
		}
		if got := cm.GetLabels()["grafana_dashboard"]; got != "1" {
			t.Errorf("%s: label grafana_dashboard = %q, want \"1\"", key, got)
		}
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedString(cm.Object, "data", name+".json")
		if diff := cmp.Diff(string(file), got); diff != "" {
			t.Errorf("%s: data differs from %s (-file +rendered):\n%s", key, path, diff)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: data is not JSON", key)
		}
	}
}

// `kubectl kustomize config/monitoring` holds the same monitoring objects
// as the chart (the ServiceMonitor equal field by field, the rules and
// dashboards equal in content, each labelled for kube-prometheus-stack),
// and the apiserver accepts both.
func TestMonitoringKustomizeMatchesChart(t *testing.T) {
	chart := map[string]*unstructured.Unstructured{}
	for _, o := range withoutHelmMetadata(monitoringOn(t)) {
		switch o.GetKind() {
		case "ServiceMonitor", "PrometheusRule", "ConfigMap":
			chart[objectKey(o)] = o
		}
	}
	manifest := kustomize(t, filepath.Join(framework.RepoRoot(), "config", "monitoring"))
	kustomized := byKey(t, decode(t, manifest))
	if diff := cmp.Diff(keysOf(chart), keysOf(kustomized)); diff != "" {
		t.Fatalf("The monitoring objects differ (-chart +kustomize):\n%s", diff)
	}
	for key, want := range chart {
		got := kustomized[key]
		switch want.GetKind() {
		case "ServiceMonitor":
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("%s differs (-chart +kustomize):\n%s", key, diff)
			}
		case "PrometheusRule":
			if diff := cmp.Diff(want.Object["spec"], got.Object["spec"]); diff != "" {
				t.Errorf("%s: spec differs (-chart +kustomize):\n%s", key, diff)
			}
			if got.GetLabels()["release"] != "kube-prometheus-stack" {
				t.Errorf("%s: labels %v, want release kube-prometheus-stack", key, got.GetLabels())
			}
		case "ConfigMap":
			if diff := cmp.Diff(want.Object["data"], got.Object["data"]); diff != "" {
				t.Errorf("%s: data differs (-chart +kustomize):\n%s", key, diff)
			}
			if got.GetLabels()["grafana_dashboard"] != "1" {
				t.Errorf("%s: labels %v, want grafana_dashboard \"1\"", key, got.GetLabels())
			}
		}
	}
	if warnings := dryRun(t, manifest); strings.Contains(warnings, "Warning") {
		t.Errorf("The dry-run of config/monitoring warned:\n%s", warnings)
	}
	if warnings := dryRun(t, helmTemplate(t, valueSets["default"], "--set", "monitoring.serviceMonitor.enabled=true",
		"--set", "monitoring.prometheusRule.enabled=true", "--set", "monitoring.dashboards.enabled=true")); strings.Contains(warnings, "Warning") {
		t.Errorf("The dry-run of the chart with its generated files warned:\n%s", warnings)
	}
}
