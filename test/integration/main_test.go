//go:build integration

// Package integration holds the suites that run against a real
// kube-apiserver and etcd (started from bin/ by test/framework) with the
// TFJob CRD of deploy/crds installed.
package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// apiServer is the one kube-apiserver and etcd of this package, started by
// TestMain and shared by every test. Tests isolate themselves by namespace:
// see newNamespace.
var apiServer *framework.APIServer

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{Name: "integration"}, func(s *framework.Suite) error {
		apiServer = s.APIServer
		return nil
	}))
}

// namespaceSeq makes namespace names unique within the run; each run has
// its own etcd, so names never collide across runs.
var namespaceSeq atomic.Int64

// newNamespace creates a fresh namespace for t, named after the test, and
// removes it when t ends (see deleteNamespace for what is cleaned up).
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", namespacePrefix(t.Name()), namespaceSeq.Add(1))
	useNamespace(t, name)
	return name
}

// namespacePrefix turns a test name, subtests included, into the start of
// a DNS-1123 label: lowercase letters, digits and single dashes.
func namespacePrefix(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	prefix := strings.Trim(b.String(), "-")
	if prefix == "" {
		return "test"
	}
	return prefix
}

// useNamespace creates the namespace name for t (manifests that name their
// own namespace, such as ml-dev, need it under that name) and removes it
// when t ends, so that a later test can create it again.
func useNamespace(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	if err := apiServer.CreateNamespace(ctx, name); err != nil {
		t.Fatalf("Creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := deleteNamespace(context.Background(), name); err != nil {
			t.Errorf("Cleaning up namespace %s: %v", name, err)
		}
	})
}

// deleteNamespace deletes the TFJobs and the ServiceAccount of a namespace,
// then the namespace itself, and waits until it is gone. A suite that
// creates other kinds in a namespace deletes them itself, or adds them
// here. There is no
// namespace controller here, so nothing else would empty it, and a deleted
// namespace would stay Terminating forever: its finalizer is cleared by
// hand, as the namespace controller would once the namespace is empty. The
// first delete only marks the namespace Terminating; the second, with no
// finalizer left, removes it.
func deleteNamespace(ctx context.Context, name string) error {
	c := apiServer.Client
	if err := c.DeleteAllOf(ctx, &kubeflowv1.TFJob{}, client.InNamespace(name)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the TFJobs: %w", err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
	if err := c.Delete(ctx, sa); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the default ServiceAccount: %w", err)
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		return client.IgnoreNotFound(err)
	}
	ns.Spec.Finalizers = nil
	if err := c.SubResource("finalize").Update(ctx, ns); err != nil {
		return fmt.Errorf("clearing the namespace finalizers: %w", err)
	}
	for range 2 {
		if err := c.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the namespace: %w", err)
		}
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// kubectl runs bin/kubectl against the package's apiserver and returns its
// standard output; a failure fails t with kubectl's standard error.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, apiServer.Env.KubeConfig, 0o600); err != nil {
		t.Fatalf("Writing the kubeconfig: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), framework.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(framework.BinDir(), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}
