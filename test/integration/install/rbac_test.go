//go:build integration

package install

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/test/framework"
)

// The manager, authenticated as the chart's ServiceAccount with nothing but
// the chart's RBAC (the two-replica rendering, with leader election), wins
// its Lease and runs a distributed TFJob through every write it makes:
// PodGroup (Volcano's, served here from the gang suite's CRD), pods,
// services, status, events, and the release of a deleted pod's tracking
// finalizer. It cannot read secrets. The paths of the Deployment's probes
// answer on its health port, and its metrics on the metrics port.
func TestManagerRunsWithChartRBAC(t *testing.T) {
	c := apiServer.Client
	if err := clusterReady(); err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(apiServer.Env.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(framework.RepoRoot(), "test", "integration", "gang", "testdata", "podgroup-crds.yaml")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatalf("Installing Volcano's PodGroup CRD: %v", err)
	}
	rendered := helmTemplate(t, valueSets["ha"], "--include-crds")
	apply(t, rendered)
	probes := probePaths(t, decode(t, rendered))

	sa, err := apiServer.Env.AddUser(envtest.User{
		Name:   "system:serviceaccount:" + namespace + ":backfill-manager",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := manager.DefaultOptions()
	opts.MetricsAddress, opts.HealthAddress = loopbackAddress(t), loopbackAddress(t)
	opts.LeaderElect, opts.LeaderElectionNamespace, opts.LeaderElectionID = true, namespace, "backfill-manager"
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- manager.RunWithConfig(runCtx, sa.Config(), opts) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("The manager: %v", err)
		}
		if t.Failed() {
			t.Logf("The manager's log:\n%s", managerLog.String())
		}
	})

	if err := apiServer.CreateNamespace(ctx(t), "training"); err != nil {
		t.Fatal(err)
	}
	job := distributedJob("training", "rbac")
	if err := c.Create(ctx(t), job); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Lease held, the PodGroup, 3 pods, 3 services, the Created condition and an event", func(ctx context.Context) (bool, string, error) {
		return jobStarted(ctx, c, job)
	})

	// A deleted pod keeps the tracking finalizer until the manager patches
	// it away; then the manager creates it again.
	pod := &corev1.Pod{}
	if err := c.Get(ctx(t), client.ObjectKey{Namespace: "training", Name: "rbac-worker-1"}, pod); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx(t), pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rbac-worker-1 released and recreated", func(ctx context.Context) (bool, string, error) {
		again := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), again); err != nil {
			return false, err.Error(), client.IgnoreNotFound(err)
		}
		return again.UID != pod.UID, fmt.Sprintf("uid %s (was %s), finalizers %v", again.UID, pod.UID, again.Finalizers), nil
	})

	for _, path := range probes {
		expectOK(t, "http://"+opts.HealthAddress+path, "")
	}
	expectOK(t, "http://"+opts.MetricsAddress+"/metrics", "training_operator_jobs_created_total")

	saClient, err := client.New(sa.Config(), client.Options{Scheme: framework.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := saClient.List(ctx(t), &corev1.SecretList{}, client.InNamespace("training")); !apierrors.IsForbidden(err) {
		t.Errorf("The manager's ServiceAccount listing secrets: %v, want Forbidden", err)
	}
}

// jobStarted looks for everything the manager writes when a distributed
// job starts.
func jobStarted(ctx context.Context, c client.Client, job *kubeflowv1.TFJob) (bool, string, error) {
	var seen []string
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "backfill-manager"}, lease); err != nil || ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
		return false, fmt.Sprintf("lease: %v", err), nil
	}
	pg := &unstructured.Unstructured{}
	pg.SetGroupVersionKind(schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"})
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), pg); err != nil {
		return false, fmt.Sprintf("podgroup: %v", err), nil
	}
	var pods corev1.PodList
	var services corev1.ServiceList
	if err := c.List(ctx, &pods, client.InNamespace(job.Namespace)); err != nil {
		return false, "", err
	}
	if err := c.List(ctx, &services, client.InNamespace(job.Namespace)); err != nil {
		return false, "", err
	}
	seen = append(seen, fmt.Sprintf("%d pods, %d services", len(pods.Items), len(services.Items)))
	got := &kubeflowv1.TFJob{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
		return false, "", err
	}
	created := false
	for _, cond := range got.Status.Conditions {
		created = created || (cond.Type == kubeflowv1.JobCreated && cond.Status == corev1.ConditionTrue)
	}
	seen = append(seen, fmt.Sprintf("created %v", created))
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(job.Namespace)); err != nil {
		return false, "", err
	}
	seen = append(seen, fmt.Sprintf("%d events", len(events.Items)))
	return len(pods.Items) == 3 && len(services.Items) == 3 && created && len(events.Items) > 0, strings.Join(seen, ", "), nil
}

// distributedJob is a TFJob of one parameter server and two workers.
func distributedJob(ns, name string) *kubeflowv1.TFJob {
	spec := func(n int32) *kubeflowv1.ReplicaSpec {
		return &kubeflowv1.ReplicaSpec{
			Replicas: ptr.To(n),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Image: "tensorflow/tensorflow:2.13.0"}}}},
		}
	}
	return &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypePS:     spec(1),
			kubeflowv1.ReplicaTypeWorker: spec(2),
		}},
	}
}

// apply creates a manifest with server-side apply.
func apply(t *testing.T, manifest []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(framework.BinDir(), "kubectl"), "--kubeconfig", kubeconfig,
		"apply", "--server-side", "--field-manager=backfill-install-test", "-f", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply --server-side: %v\n%s", err, out)
	}
}

// eventually polls cond until it holds, and fails the test with the last
// state seen when it returns an error or the time is up.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	var seen string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		done, s, err := cond(ctx)
		seen = s
		return done, err
	})
	if err != nil {
		t.Fatalf("Waiting for %s: %v\nlast seen: %s", what, err, seen)
	}
}

// syncBuffer is a log sink the manager's goroutines share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// probePaths are the HTTP paths of the manager container's probes.
func probePaths(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		var paths []string
		for _, c := range containers {
			for _, probe := range []string{"livenessProbe", "readinessProbe"} {
				if path, ok, _ := unstructured.NestedString(c.(map[string]any), probe, "httpGet", "path"); ok {
					paths = append(paths, path)
				}
			}
		}
		if len(paths) != 2 {
			t.Fatalf("The Deployment's probes have paths %v, want a liveness and a readiness path", paths)
		}
		return paths
	}
	t.Fatal("No Deployment rendered")
	return nil
}

// loopbackAddress is a free port on 127.0.0.1.
func loopbackAddress(t *testing.T) string {
	t.Helper()
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// expectOK gets a URL and expects 200 and, if want is set, a body that
// contains it.
func expectOK(t *testing.T, url, want string) {
	t.Helper()
	eventually(t, "GET "+url, func(ctx context.Context) (bool, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return false, err.Error(), nil
		}
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), want), fmt.Sprintf("%s, %d bytes", resp.Status, len(body)), nil
	})
}
