package framework

import (
	"context"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/devcluster/kueue"
	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// kueueStart bounds Kueue's start: installing its CRDs, registering its
// webhooks and its first readiness.
const kueueStart = 2 * time.Minute

// InstallWorkloadCRD installs Kueue's Workload CRD alone (1.4 MB), from
// the manifests make copies next to bin/kueue, and waits until it is
// served: for suites that write what Kueue would, without running it.
func (a *APIServer) InstallWorkloadCRD() error {
	if err := requireBinaries("kueue"); err != nil {
		return err
	}
	path := filepath.Join(BinDir(), "kueue-manifests", "crd", "kueue.x-k8s.io_workloads.yaml")
	_, err := envtest.InstallCRDs(a.Env.Config, envtest.CRDInstallOptions{Paths: []string{path}, ErrorIfPathMissing: true})
	return err
}

// StartKueue installs Kueue's CRDs on the apiserver, runs bin/kueue with
// its TFJob integration on (and all-or-nothing admission when wait is
// set), registers its webhooks, and returns once it is ready. It is
// stopped, by its PID, when the suite closes.
func (s *Suite) StartKueue(a *APIServer, wait *kueue.WaitForPodsReady) (*kueue.Kueue, error) {
	if err := requireBinaries("kueue"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), kueueStart)
	defer cancel()
	if err := kueue.InstallCRDs(ctx, a.Env.Config, BinDir(), kueueStart); err != nil {
		return nil, err
	}
	kubeconfig, err := a.AdminKubeconfig(s.Logs, "kueue")
	if err != nil {
		return nil, err
	}
	k, err := kueue.Prepare(kueue.Options{BinDir: BinDir(), Kubeconfig: kubeconfig, Dir: s.Logs, WaitForPodsReady: wait})
	if err != nil {
		return nil, err
	}
	p, err := process.StartNamed("kueue", k.Binary, k.Args, nil, filepath.Join(s.Logs, "kueue.log"))
	if err != nil {
		return nil, err
	}
	s.OnStop("kueue", func() error { return p.Stop(30 * time.Second) })
	if err := kueue.RegisterWebhooks(ctx, a.Client, BinDir(), k); err != nil {
		return nil, err
	}
	if err := k.WaitReady(ctx, p, kueueStart); err != nil {
		return nil, err
	}
	return k, nil
}
