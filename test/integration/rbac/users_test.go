//go:build integration

package rbac

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// runFor is how long kwok runs a job's worker before it succeeds: long
// enough to read its log while it runs.
const runFor = 20 * time.Second

// A user bound to the built-in edit role in a namespace, and nothing
// else, submits a TFJob, reads its log, lists and describes it, waits
// for its success, with backfill and with kubectl, deletes it, and runs
// doctor, whose checks that need reads beyond the namespace say which
// ClusterRole grants them. Beyond the namespace, each refusal names that
// role too.
func TestEditUserTrainsAJob(t *testing.T) {
	ns := newNamespace(t, "team")
	trainer := namespaceUser(t, ns, "trainer", "edit")

	kubectlAs(t, trainer, "get", "tfjobs", "-n", ns).works(t, "No resources found in "+ns+" namespace.")
	job := jobManifest(t, "mnist", runFor, false)
	as(t, trainer, "submit", "-f", job, "-n", ns, "--wait", "--timeout", "2m").works(t, "tfjob.kubeflow.org/mnist created", "mnist: Running")
	serveLog(t, ns, "mnist-worker-0", "step 100, loss 0.31")
	readLog(t, trainer, ns, "mnist", "step 100, loss 0.31")
	as(t, trainer, "get", "-n", ns).works(t, "NAME", "mnist")
	as(t, trainer, "describe", "mnist", "-n", ns).works(t, "Name:", "mnist-worker-0")
	as(t, trainer, "wait", "tfjobs", "mnist", "-n", ns, "--timeout", "2m").works(t, "mnist: Succeeded")

	as(t, trainer, "submit", "-f", job, "-n", ns, "--wait-for=done", "--timeout", "2m").
		works(t, "tfjob.kubeflow.org/mnist unchanged", "mnist: Succeeded")
	as(t, trainer, "get", "tfjobs", "mnist", "-n", ns).works(t, "Succeeded")
	kubectlAs(t, trainer, "get", "tfjobs", "-n", ns).works(t, "mnist", "Succeeded")

	results := doctorReport(t, as(t, trainer, "doctor", "-n", ns, "-o", "json"))
	wantResult(t, results, "tfjob-crd", "OK", "")
	wantResult(t, results, "crash-loop", "OK", "")
	wantResult(t, results, "gpu-nodes", "SKIP", "--clusterrole=backfill-cluster-view")

	as(t, trainer, "get", "tfjobs", "-A").refused(t, `cannot list resource "tfjobs"`, "at the cluster scope",
		"ClusterRoleBinding to the ClusterRole backfill-cluster-view", "-n NAMESPACE")
	as(t, trainer, "describe", "node", node).refused(t, `cannot get resource "nodes"`, "ClusterRole backfill-cluster-view")
	kubectlAs(t, trainer, "delete", "tfjob", "mnist", "-n", ns).works(t, `tfjob.kubeflow.org "mnist" deleted`)
}

// A user bound to view reads what an edit user of its namespace runs:
// the list, the description, the log, and doctor's findings, here a
// crash-looping container, and waits for the job to run and to end. Every change is refused with
// the role it needs, and changes nothing.
func TestViewUserReadsButCannotChange(t *testing.T) {
	ns := newNamespace(t, "team")
	trainer := namespaceUser(t, ns, "trainer", "edit")
	watcher := namespaceUser(t, ns, "watcher", "view")
	job := jobManifest(t, "mnist", runFor, false)
	as(t, trainer, "submit", "-f", job, "-n", ns, "--wait", "--timeout", "2m").works(t, "mnist: Running")
	as(t, trainer, "submit", "-f", jobManifest(t, "crasher", 0, true), "-n", ns).works(t, "tfjob.kubeflow.org/crasher created")
	serveLog(t, ns, "mnist-worker-0", "step 200, loss 0.12")

	readLog(t, watcher, ns, "mnist", "step 200, loss 0.12")
	as(t, watcher, "get", "-n", ns, "-o", "wide").works(t, "mnist", "crasher")
	as(t, watcher, "describe", "tfjob", "mnist", "-n", ns).works(t, "Name:", "mnist-worker-0")
	kubectlAs(t, watcher, "get", "tfjobs", "-n", ns).works(t, "mnist", "crasher")
	as(t, watcher, "wait", "mnist", "-n", ns, "--for=running").works(t, "mnist: Running")
	as(t, watcher, "wait", "mnist", "-n", ns, "--timeout", "2m").works(t, "mnist: Succeeded")
	as(t, watcher, "get", "tfjob/mnist", "-n", ns).works(t, "Succeeded")

	before := getJob(t, ns, "mnist")
	changed := strings.Replace(readFile(t, job), "replicas: 1", "replicas: 2", 1)
	as(t, watcher, "submit", "-f", writeFile(t, "changed.yaml", changed), "-n", ns, "--wait-for=done").
		refused(t, `cannot patch resource "tfjobs"`, `in the namespace "`+ns+`"`, "needs the edit or admin role in namespace "+ns)
	kubectlAs(t, watcher, "delete", "tfjob", "mnist", "-n", ns).refusedByKubectl(t, `cannot delete resource "tfjobs"`)
	if after := getJob(t, ns, "mnist"); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("a refused change changed TFJob mnist: resourceVersion %s, was %s", after.ResourceVersion, before.ResourceVersion)
	}

	r := eventually(t, "doctor, as the view user, to find the crash loop", 2*time.Minute,
		func() result { return as(t, watcher, "doctor", "-n", ns, "-o", "json") },
		func(r result) bool {
			results, err := decodeReport(r)
			return err == nil && len(find(results, "crash-loop", "FAIL")) == 1
		})
	results := doctorReport(t, r)
	if got := find(results, "crash-loop", "FAIL")[0]; got.Object != "pod "+ns+"/crasher-worker-0" {
		t.Errorf("crash-loop FAIL is about %q, want pod %s/crasher-worker-0", got.Object, ns)
	}
	wantResult(t, results, "pending-resources", "SKIP", "--clusterrole=backfill-cluster-view")
}

// A user of another namespace, even one with edit there, sees nothing of
// this one: every command is refused with what it lacks, and nothing of
// the job shows.
func TestOtherNamespaceSeesNothing(t *testing.T) {
	theirs := newNamespace(t, "team")
	createJob(t, theirs, "secret-project")
	own := newNamespace(t, "other")
	outsider := namespaceUser(t, own, "outsider", "edit")

	as(t, outsider, "get", "-n", own).works(t, "No resources found in "+own+" namespace.")
	inTheirs := `in the namespace "` + theirs + `"`
	for _, args := range [][]string{
		{"get", "-n", theirs},
		{"get", "tfjobs", "secret-project", "-n", theirs},
		{"describe", "secret-project", "-n", theirs},
		{"logs", "secret-project", "-n", theirs},
		{"wait", "secret-project", "-n", theirs},
		{"doctor", "-n", theirs},
		{"doctor", "secret-project", "-n", theirs},
		{"submit", "-f", jobManifest(t, "intruder", runFor, false), "-n", theirs, "--wait"},
	} {
		r := as(t, outsider, args...)
		r.refused(t, "is forbidden", inTheirs, "role in namespace "+theirs)
		if strings.Contains(r.stdout, "secret-project") {
			t.Errorf("%s showed the job:\n%s", r.args, r.stdout)
		}
	}
	as(t, outsider, "get", "-A").refused(t, "at the cluster scope", "backfill-cluster-view")
	kubectlAs(t, outsider, "get", "tfjobs", "-n", theirs).refusedByKubectl(t, `cannot list resource "tfjobs"`)
	var list kubeflowv1.TFJobList
	if err := apiServer.Client.List(context.Background(), &list, client.InNamespace(theirs)); err != nil || len(list.Items) != 1 {
		t.Errorf("namespace %s holds %d TFJobs (%v), want only secret-project", theirs, len(list.Items), err)
	}
}

// The ClusterRole backfill installs for cluster-wide reads, bound with a
// ClusterRoleBinding, is all doctor needs: no check is skipped for want
// of access, and get -A and describe node work.
func TestClusterViewRunsEveryCheck(t *testing.T) {
	ns := newNamespace(t, "ops")
	lead := namespaceUser(t, ns, "lead", "view")
	// Without the binding, checks are skipped: the assertion below can fail.
	if skips := accessSkips(doctorReport(t, as(t, lead, "doctor", "-n", ns, "-o", "json"))); len(skips) == 0 {
		t.Fatal("doctor as a namespace viewer skipped no check for access")
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-lead-cluster-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "backfill-cluster-view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "lead"}},
	}
	if err := apiServer.Client.Create(context.Background(), binding); err != nil {
		t.Fatal(err)
	}
	r := eventually(t, "doctor -A to run every check", time.Minute,
		func() result { return as(t, lead, "doctor", "-A", "-o", "json") },
		func(r result) bool {
			// Until the authorizer's cache has the binding, doctor -A is refused.
			results, err := decodeReport(r)
			return err == nil && len(results) > 0 && len(accessSkips(results)) == 0
		})
	t.Logf("doctor -A as a user bound to backfill-cluster-view:\n%s", r.stdout)
	as(t, lead, "get", "tfjobs", "-A").works(t)
	as(t, lead, "describe", "node", node).works(t, node)
}
