//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/test/framework"
)

// A platform engineer's install: `helm install` of charts/backfill, with
// two replicas (leader election and its Role) and every monitoring object
// on, into a namespace that enforces the restricted Pod Security level,
// creates every object of the release; the manager's pods are admitted
// there and become ready; `helm upgrade` keeps the report endpoint's CA;
// `helm uninstall` removes every object again. The local cluster has
// already created the offline PriorityClass (its manager, as a manager run
// before the chart would have) and the users' ClusterRoles (as config/
// would have), so the test hands them to Helm the way docs/install.md
// says. The cluster has no Prometheus Operator: the
// ServiceMonitor and PrometheusRule go to the stand-in CRDs of the install
// suite's testdata.
func TestHelmInstall(t *testing.T) {
	dc := startCluster(t)
	c := dc.client
	const ns, release = "backfill-system", "backfill"
	create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
	}}})
	adopt(t, c, &schedulingv1.PriorityClass{}, "backfill-offline", release, ns)
	for _, role := range []string{"backfill-tfjob-edit", "backfill-tfjob-view", "backfill-cluster-view"} {
		adopt(t, c, &rbacv1.ClusterRole{}, role, release, ns)
	}
	kubectl := exec.Command(filepath.Join(framework.BinDir(), "kubectl"), "--kubeconfig", dc.state.Kubeconfig, "apply", "--server-side",
		"-f", filepath.Join(framework.RepoRoot(), "test", "integration", "install", "testdata", "monitoring-crds.yaml"))
	if out, err := kubectl.CombinedOutput(); err != nil {
		t.Fatalf("Applying the stand-in monitoring CRDs: %v\n%s", err, out)
	}
	kubectl = exec.Command(filepath.Join(framework.BinDir(), "kubectl"), "--kubeconfig", dc.state.Kubeconfig, "wait", "--for=condition=Established",
		"--timeout=60s", "crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com")
	if out, err := kubectl.CombinedOutput(); err != nil {
		t.Fatalf("Waiting for the stand-in monitoring CRDs: %v\n%s", err, out)
	}

	helm := func(args ...string) string {
		t.Helper()
		out, err := framework.Helm(append(args, "--kubeconfig", dc.state.Kubeconfig)...)
		if err != nil {
			t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	helm("install", release, filepath.Join(framework.RepoRoot(), "charts", "backfill"), "--namespace", ns,
		"--set", "replicaCount=2", "--set", "monitoring.serviceMonitor.enabled=true", "--set", "monitoring.prometheusRule.enabled=true",
		"--set", "monitoring.dashboards.enabled=true", "--wait", "--timeout", "3m")
	objects := decodeManifest(t, helm("get", "manifest", release, "--namespace", ns))
	kinds := map[string]bool{}
	for _, o := range objects {
		kinds[o.GetKind()] = true
	}
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service", "Deployment", "PriorityClass", "Secret",
		"ServiceMonitor", "PrometheusRule", "ConfigMap"} {
		if !kinds[kind] {
			t.Errorf("The release has no %s: %v", kind, kinds)
		}
	}
	for _, o := range objects {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%s %s of the release: %v", o.GetKind(), o.GetName(), err)
			continue
		}
		if got.GetLabels()["app.kubernetes.io/managed-by"] != "Helm" || got.GetAnnotations()["meta.helm.sh/release-name"] != release {
			t.Errorf("%s %s is not the release's: labels %v, annotations %v", o.GetKind(), o.GetName(), got.GetLabels(), got.GetAnnotations())
		}
	}
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := c.Get(context.Background(), client.ObjectKey{Name: "tfjobs.kubeflow.org"}, crd); err != nil {
		t.Errorf("The TFJob CRD: %v", err)
	}
	waitFor(t, time.Minute, "two ready manager pods", func(ctx context.Context) (bool, string, error) {
		pods, err := listPods(ctx, c, ns, client.MatchingLabels{"app.kubernetes.io/name": "backfill", "app.kubernetes.io/component": "manager"})
		if err != nil {
			return false, err.Error(), nil
		}
		ready := 0
		for i := range pods {
			for _, cond := range pods[i].Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == 2 && len(pods) == 2, describePods(pods), nil
	})

	// An upgrade keeps the report endpoint's CA, which training pods carry.
	caOf := func() string {
		t.Helper()
		secret := &corev1.Secret{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "backfill-manager-reports-tls"}, secret); err != nil {
			t.Fatalf("The report endpoint's Secret: %v", err)
		}
		return string(secret.Data["ca.crt"])
	}
	before := caOf()
	helm("upgrade", release, filepath.Join(framework.RepoRoot(), "charts", "backfill"), "--namespace", ns, "--reuse-values", "--wait", "--timeout", "3m")
	if after := caOf(); after != before || before == "" {
		t.Errorf("helm upgrade changed the report endpoint's CA (or there was none): before %d bytes, after %d bytes", len(before), len(after))
	}

	helm("uninstall", release, "--namespace", ns, "--wait", "--timeout", "2m")
	waitFor(t, time.Minute, "every object of the release gone", func(ctx context.Context) (bool, string, error) {
		var left []string
		for _, o := range objects {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(o.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err == nil {
				left = append(left, o.GetKind()+" "+o.GetName())
			} else if ignoreNotFound(err) != nil {
				return false, err.Error(), nil
			}
		}
		return len(left) == 0, strings.Join(left, ", "), nil
	})
}

// adopt gives an existing cluster-scoped object to a Helm release: Helm
// installs over an object only when it carries the release's ownership
// label and annotations.
func adopt(t *testing.T, c client.Client, obj client.Object, name, release, ns string) {
	t.Helper()
	kind := fmt.Sprintf("%T", obj)
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, obj); err != nil {
		t.Fatalf("The local cluster's %s %s: %v", kind, name, err)
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	obj.SetLabels(withEntries(obj.GetLabels(), map[string]string{"app.kubernetes.io/managed-by": "Helm"}))
	obj.SetAnnotations(withEntries(obj.GetAnnotations(), map[string]string{"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": ns}))
	if err := c.Patch(context.Background(), obj, patch); err != nil {
		t.Fatalf("Handing %s %s to Helm: %v", kind, name, err)
	}
}

func withEntries(m, add map[string]string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	for k, v := range add {
		m[k] = v
	}
	return m
}

// decodeManifest splits a multi-document manifest into its objects.
func decodeManifest(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		obj := map[string]any{}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("Decoding the release's manifest: %v", err)
		}
		if len(obj) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}
