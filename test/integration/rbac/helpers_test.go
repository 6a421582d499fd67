//go:build integration

package rbac

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

var namespaceSeq atomic.Int64

// newNamespace creates a namespace of the test's; the suite's etcd goes
// away with it.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, namespaceSeq.Add(1))
	if err := apiServer.CreateNamespace(context.Background(), name); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// namespaceUser is a ServiceAccount of ns bound, in ns only, to the
// built-in ClusterRole role (admin, edit or view), as a platform team
// gives a namespace to an ML engineer; it returns the path of a
// kubeconfig with the ServiceAccount's token.
func namespaceUser(t *testing.T, ns, name, role string) string {
	t.Helper()
	ctx := context.Background()
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if err := apiServer.Client.Create(ctx, binding); err != nil {
		t.Fatalf("binding %s/%s to %s: %v", ns, name, role, err)
	}
	path, err := apiServer.ServiceAccountKubeconfig(ctx, filepath.Join(logs, "users"), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer reads bindings from its cache: wait until it knows
	// this one.
	user := "system:serviceaccount:" + ns + ":" + name
	framework.Eventually(t, user+"'s binding to take effect", func(ctx context.Context) (bool, error) {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Group: "kubeflow.org", Resource: "tfjobs"},
		}}
		if err := apiServer.Client.Create(ctx, review); err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	})
	return path
}

// result is what one run of a command printed and how it exited.
type result struct {
	args           string
	stdout, stderr string
	code           int
}

// as runs backfill with args as the user of kubeconfig.
func as(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	if args[0] == "doctor" {
		// No local dev cluster on this machine lends doctor a Prometheus.
		args = append(args, "--dev-state-dir", t.TempDir())
	}
	return run(t, backfill, append(args, "--kubeconfig", kubeconfig)...)
}

// kubectlAs runs kubectl with args as the user of kubeconfig.
func kubectlAs(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	return run(t, filepath.Join(framework.BinDir(), "kubectl"), append(args, "--kubeconfig", kubeconfig)...)
}

func run(t *testing.T, binary string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s %s: %v", filepath.Base(binary), strings.Join(args, " "), err)
	}
	return result{args: filepath.Base(binary) + " " + strings.Join(args, " "), stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// works checks the run succeeded and printed every one of wants.
func (r result) works(t *testing.T, wants ...string) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", r.args, r.code, r.stdout, r.stderr)
	}
	for _, want := range wants {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("%s printed no %q:\nstdout:\n%s\nstderr:\n%s", r.args, want, r.stdout, r.stderr)
		}
	}
	return r
}

// refused checks the run failed with exit code 1 and one line of stderr
// holding every one of wants.
func (r result) refused(t *testing.T, wants ...string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("%s: exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.args, r.code, r.stdout, r.stderr)
	}
	if lines := strings.Count(strings.TrimSpace(r.stderr), "\n") + 1; lines != 1 {
		t.Errorf("%s: stderr has %d lines, want one:\n%s", r.args, lines, r.stderr)
	}
	for _, want := range wants {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%s: stderr %q does not say %q", r.args, r.stderr, want)
		}
	}
}

// jobManifest is a TFJob of one worker that kwok runs for runFor, then
// ends it successfully; with crashLoop, its container crashes instead,
// again and again.
func jobManifest(t *testing.T, name string, runFor time.Duration, crashLoop bool) string {
	t.Helper()
	annotation := simkwok.SimDurationAnnotation + `: "` + runFor.String() + `"`
	if crashLoop {
		annotation = simkwok.SimCrashLoopAnnotation + `: "true"`
	}
	manifest := `apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: ` + name + `
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            ` + annotation + `
        spec:
          containers:
          - name: tensorflow
            image: tensorflow/tensorflow:2.15.0
            resources:
              requests: {cpu: "1", memory: 1Gi}
              limits: {cpu: "1", memory: 1Gi}
`
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveLog gives the job's pod replica a log, as its node's kubelet
// would: kwok serves the file a Logs object names.
func serveLog(t *testing.T, ns, podName string, lines ...string) {
	t.Helper()
	ctx := context.Background()
	var pod corev1.Pod
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName}, &pod); err != nil {
		t.Fatalf("getting pod %s/%s: %v", ns, podName, err)
	}
	var text strings.Builder
	for _, line := range lines {
		text.WriteString(simkwok.LogLine(time.Now(), line))
	}
	file := filepath.Join(t.TempDir(), podName+".log")
	if err := os.WriteFile(file, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(apiServer.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	obj := simkwok.LogsObject(ns, podName, string(pod.UID), file)
	if _, err := dyn.Resource(simkwok.LogsResource).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the Logs object of %s/%s: %v", ns, podName, err)
	}
}

// eventually runs the command until check passes on its result, and
// returns that result; at the timeout it fails with the last one.
func eventually(t *testing.T, what string, timeout time.Duration, runIt func() result, check func(result) bool) result {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := runIt()
		if check(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s exited %d\nstdout:\n%s\nstderr:\n%s", what, r.args, r.code, r.stdout, r.stderr)
		}
		select {
		case <-time.After(time.Second):
		case <-t.Context().Done():
			t.Fatalf("waiting for %s: %v", what, t.Context().Err())
		}
	}
}

// doctorResult is one line of `doctor -o json`.
type doctorResult struct {
	Check, Status, Object, Finding, Fix string
}

// doctorReport decodes doctor's -o json; it fails the test unless doctor
// ran (exit code 0, or 1 for a FAIL).
func doctorReport(t *testing.T, r result) []doctorResult {
	t.Helper()
	results, err := decodeReport(r)
	if err != nil {
		t.Fatalf("%s: exit code %d, no report (%v)\nstdout:\n%s\nstderr:\n%s", r.args, r.code, err, r.stdout, r.stderr)
	}
	return results
}

// decodeReport decodes doctor's -o json, or says why there is none.
func decodeReport(r result) ([]doctorResult, error) {
	var report struct {
		Results []doctorResult `json:"results"`
	}
	if r.code > 1 {
		return nil, fmt.Errorf("exit code %d", r.code)
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		return nil, err
	}
	return report.Results, nil
}

// find returns the results of check with status.
func find(results []doctorResult, check, status string) []doctorResult {
	var out []doctorResult
	for _, res := range results {
		if res.Check == check && res.Status == status {
			out = append(out, res)
		}
	}
	return out
}

// createJob creates a TFJob as an admin would, for the tests of users
// who may not.
func createJob(t *testing.T, ns, name string) {
	t.Helper()
	job := &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "tensorflow", Image: "tensorflow/tensorflow:2.15.0"}},
			}}},
		}},
	}
	if err := apiServer.Client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
}

// refusedByKubectl checks kubectl failed with the apiserver's refusal.
func (r result) refusedByKubectl(t *testing.T, want string) {
	t.Helper()
	if r.code != 1 || !strings.Contains(r.stderr, "Error from server (Forbidden)") || !strings.Contains(r.stderr, want) {
		t.Errorf("%s: exit code %d, stderr %q; want 1 and a Forbidden error saying %q", r.args, r.code, r.stderr, want)
	}
}

// readLog waits until `backfill logs JOB` as the user shows want: kwok
// learns of the Logs object through its watch.
func readLog(t *testing.T, kubeconfig, ns, job, want string) {
	t.Helper()
	eventually(t, "the log of "+job, framework.Timeout, func() result { return as(t, kubeconfig, "logs", job, "-n", ns) },
		func(r result) bool { return r.code == 0 && strings.Contains(r.stdout, want) })
}

// wantResult fails the test unless doctor gave exactly one result of
// check with status, and its finding or fix holds want.
func wantResult(t *testing.T, results []doctorResult, check, status, want string) {
	t.Helper()
	found := find(results, check, status)
	if len(found) != 1 {
		t.Errorf("want one %s %s, got %d; all results: %+v", status, check, len(found), results)
		return
	}
	if !strings.Contains(found[0].Finding+" "+found[0].Fix, want) {
		t.Errorf("%s %s says %q, fix %q; want %q in them", status, check, found[0].Finding, found[0].Fix, want)
	}
}

// accessSkips are the results doctor skipped for want of a read.
func accessSkips(results []doctorResult) []doctorResult {
	var out []doctorResult
	for _, r := range results {
		if r.Status == "SKIP" && (strings.Contains(r.Finding, "you may not") || strings.Contains(r.Finding, "cannot read")) {
			out = append(out, r)
		}
	}
	return out
}

// getJob reads a TFJob as the admin.
func getJob(t *testing.T, ns, name string) *kubeflowv1.TFJob {
	t.Helper()
	job := &kubeflowv1.TFJob{}
	if err := apiServer.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
		t.Fatal(err)
	}
	return job
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
