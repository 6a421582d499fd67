//go:build integration

package install

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/backfill-dev/backfill/test/framework"
)

// helmOwnLabels are the labels only Helm sets: the chart, the tool and the
// app version. Every other label is the same in both installs.
var helmOwnLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"}

// withoutHelmMetadata is a copy of the objects without Helm's own labels
// and annotations.
func withoutHelmMetadata(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopy()
		if labels := o.GetLabels(); labels != nil {
			for _, k := range helmOwnLabels {
				delete(labels, k)
			}
			o.SetLabels(labels)
		}
		if ann := o.GetAnnotations(); ann != nil {
			for k := range ann {
				if strings.HasPrefix(k, "meta.helm.sh/") || strings.HasPrefix(k, "helm.sh/") {
					delete(ann, k)
				}
			}
			if len(ann) == 0 {
				ann = nil
			}
			o.SetAnnotations(ann)
		}
		out = append(out, o)
	}
	return out
}

// compareInstalls checks that two renderings hold the same objects, equal
// field by field once Helm's own metadata is removed.
func compareInstalls(t *testing.T, chart, kustomized []*unstructured.Unstructured) {
	t.Helper()
	fromChart := byKey(t, withoutHelmMetadata(chart))
	fromKustomize := byKey(t, withoutHelmMetadata(kustomized))
	if diff := cmp.Diff(keysOf(fromChart), keysOf(fromKustomize)); diff != "" {
		t.Errorf("The objects differ (-chart +kustomize):\n%s", diff)
	}
	for key, want := range fromChart {
		got, ok := fromKustomize[key]
		if !ok {
			continue
		}
		if diff := cmp.Diff(want.Object, got.Object); diff != "" {
			t.Errorf("%s differs (-chart +kustomize):\n%s", key, diff)
		}
	}
}

// `kubectl kustomize config/default` is the chart's install with default
// values, plus the manager's Namespace (which Helm users create with
// --create-namespace), minus the report endpoint's Secret. Both make the
// node agent's namespace, at the privileged Pod Security level.
func TestKustomizeMatchesChart(t *testing.T) {
	var chart []*unstructured.Unstructured
	for _, o := range decode(t, helmTemplate(t, valueSets["default"], "--include-crds")) {
		// kustomize cannot make a certificate: its users create the
		// report endpoint's Secret themselves (docs/install.md).
		if o.GetKind() != "Secret" || o.GetName() != "backfill-manager-reports-tls" {
			chart = append(chart, o)
		}
	}
	var kustomized []*unstructured.Unstructured
	var namespaces []string
	for _, o := range decode(t, kustomize(t, filepath.Join(framework.RepoRoot(), "config", "default"))) {
		if o.GetKind() == "Namespace" {
			namespaces = append(namespaces, o.GetName())
			want := map[string]string{namespace: "restricted", nodeAgentNamespace: "privileged"}[o.GetName()]
			if got := o.GetLabels()["pod-security.kubernetes.io/enforce"]; got != want {
				t.Errorf("Namespace %s enforces Pod Security level %q, want %q", o.GetName(), got, want)
			}
			if o.GetName() == namespace {
				continue
			}
		}
		kustomized = append(kustomized, o)
	}
	slices.Sort(namespaces)
	if diff := cmp.Diff([]string{nodeAgentNamespace, namespace}, namespaces); diff != "" {
		t.Errorf("Namespaces of config/default (-want +got):\n%s", diff)
	}
	compareInstalls(t, chart, kustomized)
}

// The chart's ClusterRole has exactly the rules controller-gen generates
// from internal/manager/rbac.go into config/rbac/role.yaml.
func TestChartRulesMatchMarkers(t *testing.T) {
	generated := decode(t, kustomize(t, filepath.Join(framework.RepoRoot(), "config", "rbac")))
	rendered := decode(t, helmTemplate(t, valueSets["default"]))
	rules := func(objs []*unstructured.Unstructured) any {
		for _, o := range objs {
			if o.GetKind() == "ClusterRole" && o.GetName() == "backfill-manager" {
				return o.Object["rules"]
			}
		}
		t.Fatal("No ClusterRole backfill-manager rendered")
		return nil
	}
	if diff := cmp.Diff(rules(generated), rules(rendered)); diff != "" {
		t.Errorf("The chart's ClusterRole rules differ from config/rbac/role.yaml (-generated +chart); change internal/manager/rbac.go, run `make generate`, and update templates/clusterrole.yaml to match:\n%s", diff)
	}
}
