//go:build integration

package doctor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// A ServiceAccount bound to a Role of its namespace only may not list
// pods, nodes, PriorityClasses or Leases cluster-wide: doctor reads the
// namespace's pods instead, runs the checks that need nothing more, and
// skips the others with the reads refused and the ClusterRole that
// grants them. With -A, which needs every namespace's TFJobs, it fails
// with the refusal.
func TestDoctorWithNamespaceAccessOnly(t *testing.T) {
	ns := newNamespace(t, "team-rbac")
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
	create(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notebook"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "jupyter/base-notebook"}}},
	})
	kubeconfigOf := serviceAccountKubeconfig(t, user, ns)

	run := runDoctorWith(t, kubeconfigOf, "-n", ns, "-o", "json")
	if run.exitCode != 0 {
		t.Fatalf("doctor -n %s as %s: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", ns, user, run.exitCode, run.stdout, run.stderr)
	}
	var r report
	if err := json.Unmarshal([]byte(run.stdout), &r); err != nil {
		t.Fatalf("doctor -o json printed no report (%v):\n%s", err, run.stdout)
	}
	t.Logf("doctor as %s:\n%s", user, run.stdout)
	r.mustFind(t, "offline-priority", "SKIP", "", "you may not list pods in every namespace or priorityclasses")
	r.mustFind(t, "pending-resources", "SKIP", "", "you may not list nodes or pods in every namespace")
	// The fix names the role that grants the reads, and how to bind it.
	wantFix(t, r.mustFind(t, "gpu-nodes", "SKIP", "", "you may not list nodes"),
		"the ClusterRole backfill-cluster-view", "kubectl create clusterrolebinding NAME --clusterrole=backfill-cluster-view")
	r.mustFind(t, "operator", "SKIP", "", "you may not list leases in every namespace or pods in every namespace")
	r.mustFind(t, "priority-class-missing", "SKIP", "", "you may not list priorityclasses")
	r.mustFind(t, "tfjob-crd-match", "SKIP", "", "you may not list customresourcedefinitions")
	r.mustFind(t, "other-tfjob-controller", "SKIP", "", "you may not list deployments in every namespace or pods in every namespace")
	r.mustFind(t, "gpu-loan-forecast", "SKIP", "", "you may not list deployments in every namespace or statefulsets in every namespace or nodes")
	r.mustFind(t, "tfjob-crd", "OK", "")
	r.mustFind(t, "crash-loop", "OK", "")
	r.mustFind(t, "resource-quota", "OK", "")

	all := runDoctorWith(t, kubeconfigOf, "-A")
	if lines := strings.Split(strings.TrimSpace(all.stderr), "\n"); all.exitCode != 1 || len(lines) != 1 || !strings.Contains(lines[0], "is forbidden") {
		t.Errorf("doctor -A as %s: exit code %d, stderr %q; want 1 and one line with the refusal", user, all.exitCode, all.stderr)
	}
}

// serviceAccountKubeconfig is a kubeconfig that authenticates as the
// ServiceAccount user, with its groups and no other rights.
func serviceAccountKubeconfig(t *testing.T, user, ns string) string {
	t.Helper()
	sa, err := apiServer.Env.AddUser(envtest.User{
		Name:   user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}, nil)
	if err != nil {
		t.Fatalf("adding the user %s: %v", user, err)
	}
	data, err := sa.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trainer.kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
