package framework

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/manager"
)

// Scheme knows the core types and TFJob: the manager's own.
func Scheme() *runtime.Scheme { return manager.Scheme() }

// APIServer is a real etcd and kube-apiserver on loopback with the TFJob
// CRD installed, started by envtest from bin/ (never downloaded).
type APIServer struct {
	Env    *envtest.Environment
	Client client.Client
}

// StartAPIServer starts etcd and kube-apiserver and installs the CRDs of
// deploy/crds.
func StartAPIServer() (*APIServer, error) { return startAPIServer(nil) }

// startAPIServer is StartAPIServer with flags ("--name=value") added to
// kube-apiserver's.
func startAPIServer(flags []string) (*APIServer, error) {
	if err := requireBinaries("etcd", "kube-apiserver", "kubectl"); err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: BinDir(),
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "deploy", "crds")},
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme(),
	}
	env.ControlPlane.GetAPIServer().Path = binaryPath("kube-apiserver")
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Append("bind-address", "127.0.0.1")
	for _, flag := range flags {
		name, value, _ := strings.Cut(strings.TrimPrefix(flag, "--"), "=")
		args.Set(name, value)
	}
	if _, err := env.Start(); err != nil {
		_ = env.Stop() // Start leaves the servers running when installing the CRDs fails
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	c, err := testClient(env)
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &APIServer{Env: env, Client: c}, nil
}

// Stop stops the apiserver and etcd.
func (a *APIServer) Stop() error { return a.Env.Stop() }

// CreateNamespace creates a namespace with its default ServiceAccount (no
// controller-manager makes one here).
func (a *APIServer) CreateNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := a.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
	if err := a.Client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// Timeout bounds waits in the suites.
const Timeout = 30 * time.Second

// testClient is the suites' client: unthrottled enough that polling every
// few hundred milliseconds never waits on the client's own rate limit.
func testClient(env *envtest.Environment) (client.Client, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 200, 400
	return client.New(cfg, client.Options{Scheme: env.Scheme})
}
