package devcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/internal/devcluster/keda"
	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
)

// KEDA in the local cluster: its operator, which turns the GPU inference's
// ScaledObject into an HPA and evaluates its cron triggers, and its
// metrics apiserver (the adapter), which serves the triggers' values as
// external metrics to kube-controller-manager's HPA controller. Both are
// built by `make keda-tools` (part of `make dev-tools`), its CRDs copied
// beside them.
const (
	kedaFieldManager   = "backfill-dev-keda"
	kedaStart          = 2 * time.Minute
	componentKEDAOp    = "keda-operator"
	componentKEDAAdapt = "keda-adapter"
)

// kedaBinaries are what startKEDA runs, built by the keda-tools target.
var kedaBinaries = []string{componentKEDAOp, componentKEDAAdapt}

// startKEDA installs KEDA's CRDs, runs its operator and adapter on
// loopback with the admin kubeconfig and registers the adapter as
// external.metrics.k8s.io/v1beta1, returning once the apiserver reports
// that API available. KEDA's certificate rotation (a Secret and a patched
// APIService) is off: one certificate, issued here for 127.0.0.1 and the
// Service's name, serves the operator's gRPC metrics service, the
// adapter's client of it and the adapter's API.
func (c *Cluster) startKEDA(ctx context.Context) error {
	if err := installKEDACRDs(ctx, c.client, filepath.Join(c.opts.BinDir, "keda-manifests", "crd")); err != nil {
		return err
	}
	if err := ensureNamespace(ctx, c.client, keda.Namespace); err != nil {
		return err
	}
	certDir := filepath.Join(c.opts.StateDir, "pki", "keda")
	caBundle, err := keda.WriteCerts(certDir, "backfill-dev-keda-ca")
	if err != nil {
		return fmt.Errorf("writing KEDA's certificates: %w", err)
	}
	free, err := c.freePorts(5)
	if err != nil {
		return err
	}
	ports := keda.PortsOf(free)
	env := keda.Env(c.cp.kubeconfig)
	if err := c.startChildEnv(componentKEDAOp, loopback(ports.Probe), env, keda.OperatorArgs(certDir, ports)...); err != nil {
		return err
	}
	operator := c.procs[len(c.procs)-1]
	if err := metricsserver.WaitOK(ctx, nil, ports.ReadyURL(), componentKEDAOp, operator.Done(), kedaStart); err != nil {
		return fmt.Errorf("keda-operator not ready (log: %s): %w", operator.LogPath(), err)
	}
	if err := c.startChildEnv(componentKEDAAdapt, loopback(ports.Adapter), env, keda.AdapterArgs(certDir, c.cp.kubeconfig, ports)...); err != nil {
		return err
	}
	adapter := c.procs[len(c.procs)-1]
	if err := metricsserver.RegisterAPIService(ctx, c.config, keda.ExternalMetricsAPI(ports, caBundle, kedaFieldManager), kedaStart); err != nil {
		return fmt.Errorf("%w (logs: %s, %s)", err, adapter.LogPath(), operator.LogPath())
	}
	return nil
}

// installKEDACRDs creates the CRDs `make keda-tools` copied into dir and
// waits until they are served.
func installKEDACRDs(ctx context.Context, c client.Client, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no KEDA CRDs in %s: run `make keda-tools` in a backfill checkout, which builds KEDA and copies them", dir)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return fmt.Errorf("decoding KEDA's CRD %s: %w", file, err)
		}
		if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("installing KEDA's CRD %s: %w", crd.Name, err)
		}
		if err := poll(ctx, "KEDA's CRD "+crd.Name+" to be established", func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
				return false, err
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			return err
		}
	}
	return nil
}
