//go:build integration

package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// The gpu-metric-names check against the apiserver. Clean first:
// backfill's own dashboards and PrometheusRule, which query dcgm-exporter's
// DCGM_FI_ names, are OK, before and after the Prometheus Operator's CRD
// is installed (its stand-in of the install suite). Then a PrometheusRule
// with the idle-GPU rule of older guides, on nvidia_gpu_utilization, and a
// dashboard that charts dcgm_fb_used in a row's panel are each a WARN
// naming the rule or panel and the DCGM name to use. A user who may list
// ConfigMaps but not PrometheusRules gets the dashboard's WARN and a SKIP
// naming the grant it lacks.
func TestDoctorGPUMetricNames(t *testing.T) {
	ns := newNamespace(t, "gpu-names")
	dashboards := backfillMonitoring(t, "deploy/monitoring/dashboards-configmap.yaml")
	for _, obj := range dashboards {
		createHere(t, ns, obj)
	}

	r := doctorJSON(t, anyExit, "-n", ns)
	r.mustFindOf(t, "gpu-metric-names", "OK", "",
		fmt.Sprintf("no PrometheusRule or Grafana dashboard queries a GPU metric name no exporter emits (scanned %d ConfigMap(s) labelled grafana_dashboard; the cluster serves no PrometheusRules)", len(dashboards)))

	installMonitoringCRDs(t)
	rules := backfillMonitoring(t, "deploy/monitoring/prometheusrule.yaml")
	for _, obj := range rules {
		createHere(t, ns, obj)
	}
	r = doctorJSON(t, anyExit, "-n", ns)
	r.mustFindOf(t, "gpu-metric-names", "OK", "", fmt.Sprintf("(scanned %d PrometheusRule(s) and %d ConfigMap(s) labelled grafana_dashboard)", len(rules), len(dashboards)))

	createHere(t, ns, idleRule())
	createHere(t, ns, oldDashboard())
	r = doctorJSON(t, anyExit, "-n", ns)
	rule := r.mustFindOf(t, "gpu-metric-names", "WARN", "prometheusrule gpu-names/gpu-alerts",
		"PrometheusRule gpu-names/gpu-alerts queries GPU metric names no exporter emits, so its alerts never fire",
		"nvidia_gpu_utilization (in alert GPUIdleLongTime): use DCGM_FI_DEV_GPU_UTIL (percent, 0–100;",
		"a threshold written for 0–1 must be multiplied by 100")
	wantFix(t, rule, "kubectl -n gpu-names edit prometheusrule gpu-alerts", "docs/observability.md#gpu-metric-names", "gpu, UUID, device, modelName and Hostname")
	r.mustFindOf(t, "gpu-metric-names", "WARN", "configmap gpu-names/gpu-dashboard",
		"Grafana dashboard ConfigMap gpu-names/gpu-dashboard queries GPU metric names no exporter emits, so those panels show No data",
		`dcgm_fb_used (in gpus.json, panel "GPU memory used"): use DCGM_FI_DEV_FB_USED (MiB; not bytes: multiply by 1048576 to get bytes)`)
	if warns, all := len(r.find("gpu-metric-names", "WARN", "")), countCheck(r, "gpu-metric-names"); warns != 2 || all != 2 {
		t.Errorf("want the two WARNs alone, got %d WARNs among %d results of gpu-metric-names", warns, all)
	}

	t.Run("without access to PrometheusRules", func(t *testing.T) { testGPUNamesRulesRefused(t, ns) })
}

// A user of one namespace who may also list ConfigMaps everywhere.
func testGPUNamesRulesRefused(t *testing.T, dashboards string) {
	ns := newNamespace(t, "gpu-names-user")
	create(t, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tfjob-user"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/log", "events", "resourcequotas", "limitranges"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{kubeflowv1.GroupVersion.Group}, Resources: []string{"tfjobs"}, Verbs: []string{"get", "list", "watch"}},
		},
	})
	user := "system:serviceaccount:" + ns + ":trainer"
	create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainer-uses-tfjobs"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tfjob-user"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "trainer"}},
	})
	createHere(t, "", &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-names-configmap-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}},
	})
	createHere(t, "", &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-names-configmap-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "gpu-names-configmap-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "trainer"}},
	})

	run := runDoctorWith(t, serviceAccountKubeconfig(t, user, ns), "-n", ns, "-o", "json")
	var r report
	// Exit code 1 is a FAIL of another check (see anyExit); more is doctor's own error.
	if err := json.Unmarshal([]byte(run.stdout), &r); err != nil || run.exitCode > 1 {
		t.Fatalf("doctor -n %s as %s: exit code %d, report error %v\nstdout:\n%s\nstderr:\n%s", ns, user, run.exitCode, err, run.stdout, run.stderr)
	}
	r.mustFindOf(t, "gpu-metric-names", "WARN", "configmap "+dashboards+"/gpu-dashboard", "dcgm_fb_used")
	skip := r.mustFindOf(t, "gpu-metric-names", "SKIP", "",
		"cannot read prometheusrules.monitoring.coreos.com in every namespace, so the GPU metric names they query were not checked")
	wantFix(t, skip, "--clusterrole=backfill-cluster-view", "get and list prometheusrules.monitoring.coreos.com in every namespace")
}

// countCheck is how many results the check gave.
func countCheck(r report, check string) int {
	n := 0
	for _, res := range r.Results {
		if res.Check == check {
			n++
		}
	}
	return n
}

// idleRule is the idle-GPU alert of older guides, on a name no exporter
// emits.
func idleRule() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
		"metadata": map[string]any{"name": "gpu-alerts"},
		"spec": map[string]any{"groups": []any{map[string]any{"name": "gpu", "rules": []any{
			map[string]any{"alert": "GPUIdleLongTime", "expr": "avg_over_time(nvidia_gpu_utilization[30m]) < 10", "for": "30m",
				"labels": map[string]any{"severity": "warning"}},
		}}}},
	}}
}

// oldDashboard is a dashboard ConfigMap for Grafana's sidecar whose row
// holds a panel on dcgm-exporter's name from before 2.0.
func oldDashboard() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-dashboard", Labels: map[string]string{"grafana_dashboard": "1"}},
		Data: map[string]string{"gpus.json": `{"title": "GPUs", "panels": [
  {"type": "row", "title": "Memory", "collapsed": true, "panels": [
    {"type": "timeseries", "title": "GPU memory used", "targets": [{"expr": "sum by (Hostname, gpu) (dcgm_fb_used) * 1048576"}]}
  ]}
]}`},
	}
}

// backfillMonitoring reads backfill's generated monitoring objects from a
// file of the repository.
func backfillMonitoring(t *testing.T, path string) []client.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []client.Object
	for {
		u := &unstructured.Unstructured{}
		err := decoder.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			if len(objs) == 0 {
				t.Fatalf("%s holds no object", path)
			}
			return objs
		}
		if err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// createHere creates obj in namespace ns ("" for a cluster-wide object)
// and deletes it when the test ends, so that later doctor runs of the
// suite see no rule or dashboard of this one.
func createHere(t *testing.T, ns string, obj client.Object) {
	t.Helper()
	obj.SetNamespace(ns)
	create(t, obj)
	t.Cleanup(func() {
		if err := apiServer.Client.Delete(context.Background(), obj); err != nil {
			t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
		}
	})
}

// installMonitoringCRDs installs the install suite's stand-ins for the
// Prometheus Operator's CRDs and waits until they are served.
func installMonitoringCRDs(t *testing.T) {
	t.Helper()
	path := filepath.Join(framework.RepoRoot(), "test", "integration", "install", "testdata", "monitoring-crds.yaml")
	if _, err := envtest.InstallCRDs(apiServer.Env.Config, envtest.CRDInstallOptions{Paths: []string{path}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing the monitoring.coreos.com CRDs: %v", err)
	}
}
