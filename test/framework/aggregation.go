package framework

import (
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
)

// StartAggregatingAPIServer is StartAPIServer with the aggregation layer's
// front proxy set up, so that the apiserver can proxy to aggregated API
// servers such as metrics-server (StartMetricsServer). The front-proxy
// credentials are written into dir.
func StartAggregatingAPIServer(dir string) (*APIServer, error) {
	if err := requireBinaries("etcd", "kube-apiserver", "kubectl"); err != nil {
		return nil, err
	}
	fp, err := metricsserver.WriteFrontProxy(dir)
	if err != nil {
		return nil, fmt.Errorf("writing the front-proxy certificates: %w", err)
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
	for _, flag := range fp.APIServerFlags() {
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
