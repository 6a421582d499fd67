package framework

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/devcluster/keda"
	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// kedaStart bounds KEDA's start: installing its CRDs, the operator's
// readiness and the external metrics API becoming available.
const kedaStart = 2 * time.Minute

// kedaFieldManager owns the objects that register KEDA's adapter.
const kedaFieldManager = "backfill-keda"

// KEDA is a running KEDA: its operator, which turns ScaledObjects into
// HPAs and evaluates their triggers, and its metrics apiserver, which
// serves the triggers' values as external metrics to the HPA controller.
type KEDA struct {
	Operator, Adapter *process.Process
}

// StartKEDA installs KEDA's CRDs (copied next to bin/keda-operator by
// `make keda-tools`), runs bin/keda-operator and bin/keda-adapter against
// the apiserver, which must aggregate (AggregatingAPIServer), and registers
// the adapter as external.metrics.k8s.io/v1beta1. It returns once the
// apiserver reports that API available. Both are stopped, by their PIDs,
// when the suite closes. The HPAs KEDA creates take effect only with
// kube-controller-manager's horizontal-pod-autoscaler-controller running.
// Its flags and certificates are internal/devcluster/keda's, as the dev
// cluster's.
func (s *Suite) StartKEDA(a *APIServer) (*KEDA, error) {
	if err := requireBinaries("keda-operator", "keda-adapter"); err != nil {
		return nil, fmt.Errorf("%w (KEDA: `make keda-tools`)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), kedaStart)
	defer cancel()
	crds := filepath.Join(BinDir(), "keda-manifests", "crd")
	if _, err := envtest.InstallCRDs(a.Env.Config, envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true}); err != nil {
		return nil, fmt.Errorf("installing KEDA's CRDs from %s (`make keda-tools` copies them): %w", crds, err)
	}
	if err := a.CreateNamespace(ctx, keda.Namespace); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", keda.Namespace, err)
	}
	certDir := filepath.Join(s.Logs, "keda-certs")
	caBundle, err := keda.WriteCerts(certDir, "backfill-keda-ca")
	if err != nil {
		return nil, fmt.Errorf("writing KEDA's certificates: %w", err)
	}
	kubeconfig, err := a.AdminKubeconfig(s.Logs, "keda")
	if err != nil {
		return nil, err
	}
	free, err := process.FreePorts(5)
	if err != nil {
		return nil, err
	}
	ports := keda.PortsOf(free)
	env := keda.Env(kubeconfig)
	operator, err := process.Start(binaryPath("keda-operator"), keda.OperatorArgs(certDir, ports), env, filepath.Join(s.Logs, "keda-operator.log"))
	if err != nil {
		return nil, err
	}
	s.OnStop("keda-operator", func() error { return operator.Stop(10 * time.Second) })
	if err := metricsserver.WaitOK(ctx, nil, ports.ReadyURL(), "keda-operator", operator.Done(), kedaStart); err != nil {
		return nil, fmt.Errorf("keda-operator not ready (log: %s): %w", operator.LogPath(), err)
	}
	adapter, err := process.Start(binaryPath("keda-adapter"), keda.AdapterArgs(certDir, kubeconfig, ports), env, filepath.Join(s.Logs, "keda-adapter.log"))
	if err != nil {
		return nil, err
	}
	s.OnStop("keda-adapter", func() error { return adapter.Stop(10 * time.Second) })
	if err := metricsserver.RegisterAPIService(ctx, a.Env.Config, keda.ExternalMetricsAPI(ports, caBundle, kedaFieldManager), kedaStart); err != nil {
		return nil, fmt.Errorf("%w (logs: %s, %s)", err, adapter.LogPath(), operator.LogPath())
	}
	return &KEDA{Operator: operator, Adapter: adapter}, nil
}
