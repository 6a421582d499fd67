package devcluster

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
	"github.com/backfill-dev/backfill/internal/devcluster/pki"
)

// KEDA in the local cluster: its operator, which turns the GPU inference's
// ScaledObject into an HPA and evaluates its cron triggers, and its
// metrics apiserver (the adapter), which serves the triggers' values as
// external metrics to kube-controller-manager's HPA controller. Both are
// built by `make keda-tools` (part of `make dev-tools`), its CRDs copied
// beside them.
const (
	kedaNamespace = "keda"
	// kedaAdapterService is the Service of the adapter, named as KEDA's
	// own manifests name it.
	kedaAdapterService = "keda-metrics-apiserver"
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
	if err := ensureNamespace(ctx, c.client, kedaNamespace); err != nil {
		return err
	}
	certDir := filepath.Join(c.opts.StateDir, "pki", "keda")
	caBundle, err := writeKEDACerts(certDir)
	if err != nil {
		return fmt.Errorf("writing KEDA's certificates: %w", err)
	}
	ports, err := c.freePorts(5)
	if err != nil {
		return err
	}
	grpcPort, probePort, operatorMetricsPort, adapterPort, adapterMetricsPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	env := append(os.Environ(),
		"KUBECONFIG="+c.cp.kubeconfig,
		"WATCH_NAMESPACE=", // every namespace
		"POD_NAMESPACE="+kedaNamespace,
		"KEDA_CLUSTER_OBJECT_NAMESPACE="+kedaNamespace,
	)
	grpcAddress := loopback(grpcPort)
	if err := c.startChildEnv(componentKEDAOp, loopback(probePort), env,
		"--leader-elect=false",
		"--enable-cert-rotation=false",
		"--cert-dir="+certDir,
		"--ca-dir="+certDir,
		"--metrics-service-bind-address="+grpcAddress,
		"--health-probe-bind-address="+loopback(probePort),
		"--metrics-bind-address="+loopback(operatorMetricsPort),
		"--zap-log-level=info",
	); err != nil {
		return err
	}
	operator := c.procs[len(c.procs)-1]
	if err := metricsserver.WaitOK(ctx, nil, "http://"+loopback(probePort)+"/readyz", componentKEDAOp, operator.Done(), kedaStart); err != nil {
		return fmt.Errorf("keda-operator not ready (log: %s): %w", operator.LogPath(), err)
	}
	if err := c.startChildEnv(componentKEDAAdapt, loopback(adapterPort), env,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(adapterPort),
		"--cert-dir="+certDir,
		"--tls-cert-file="+filepath.Join(certDir, "tls.crt"),
		"--tls-private-key-file="+filepath.Join(certDir, "tls.key"),
		"--client-ca-file="+filepath.Join(certDir, "ca.crt"),
		"--lister-kubeconfig="+c.cp.kubeconfig,
		"--authentication-kubeconfig="+c.cp.kubeconfig,
		"--authorization-kubeconfig="+c.cp.kubeconfig,
		"--metrics-service-address="+grpcAddress,
		// The adapter's own metrics: `make keda-tools` builds it patched
		// to bind 127.0.0.1 on this port.
		"--port="+strconv.Itoa(adapterMetricsPort),
		"--zap-log-level=info",
	); err != nil {
		return err
	}
	adapter := c.procs[len(c.procs)-1]
	externalMetrics := metricsserver.APIService{
		Group: "external.metrics.k8s.io", Version: "v1beta1",
		Namespace: kedaNamespace, Service: kedaAdapterService,
		Port: adapterPort, CABundle: caBundle, FieldManager: kedaFieldManager,
	}
	if err := metricsserver.RegisterAPIService(ctx, c.config, externalMetrics, kedaStart); err != nil {
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

// writeKEDACerts writes ca.crt, tls.crt and tls.key into dir, the layout
// KEDA reads from its --cert-dir, and returns the CA certificate (PEM).
func writeKEDACerts(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := pki.NewCA("backfill-dev-keda-ca")
	if err != nil {
		return nil, err
	}
	serviceDNS := kedaAdapterService + "." + kedaNamespace + ".svc"
	cert, err := ca.Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: serviceDNS},
		DNSNames:    []string{serviceDNS, "localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		// The operator's gRPC server asks the adapter for a client
		// certificate signed by the same CA: this one.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	if err := ca.WriteCert(filepath.Join(dir, "ca.crt"), ""); err != nil {
		return nil, err
	}
	return ca.CertPEM(), cert.WriteCert(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
}
