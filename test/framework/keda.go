package framework

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

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
	"github.com/backfill-dev/backfill/internal/devcluster/pki"
	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// kedaStart bounds KEDA's start: installing its CRDs, the operator's
// readiness and the external metrics API becoming available.
const kedaStart = 2 * time.Minute

// KEDA's namespace, and the Service of its metrics apiserver
// (keda-adapter), named as KEDA's own manifests name them.
const (
	KEDANamespace      = "keda"
	kedaAdapterService = "keda-metrics-apiserver"
	kedaFieldManager   = "backfill-keda"
)

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
//
// KEDA's certificate rotation (which writes a Secret and patches the
// APIService) is off: one certificate, issued here for 127.0.0.1 and the
// Service's name and usable by client and server, serves the operator's
// gRPC metrics service, the adapter's client of it (mutual TLS) and the
// adapter's API.
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
	if err := a.CreateNamespace(ctx, KEDANamespace); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", KEDANamespace, err)
	}
	certDir := filepath.Join(s.Logs, "keda-certs")
	caBundle, err := writeKEDACerts(certDir)
	if err != nil {
		return nil, fmt.Errorf("writing KEDA's certificates: %w", err)
	}
	kubeconfig, err := a.AdminKubeconfig(s.Logs, "keda")
	if err != nil {
		return nil, err
	}
	ports, err := process.FreePorts(5)
	if err != nil {
		return nil, err
	}
	grpcPort, probePort, operatorMetricsPort, adapterPort, adapterMetricsPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	env := append(os.Environ(),
		"KUBECONFIG="+kubeconfig,
		"WATCH_NAMESPACE=", // every namespace
		"POD_NAMESPACE="+KEDANamespace,
		"KEDA_CLUSTER_OBJECT_NAMESPACE="+KEDANamespace,
	)
	grpcAddress := net.JoinHostPort("127.0.0.1", strconv.Itoa(grpcPort))
	operator, err := process.Start(binaryPath("keda-operator"), []string{
		"--leader-elect=false",
		"--enable-cert-rotation=false",
		"--cert-dir=" + certDir,
		"--ca-dir=" + certDir,
		"--metrics-service-bind-address=" + grpcAddress,
		"--health-probe-bind-address=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(probePort)),
		"--metrics-bind-address=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(operatorMetricsPort)),
		"--zap-log-level=info",
	}, env, filepath.Join(s.Logs, "keda-operator.log"))
	if err != nil {
		return nil, err
	}
	s.OnStop("keda-operator", func() error { return operator.Stop(10 * time.Second) })
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort)
	if err := metricsserver.WaitOK(ctx, nil, readyz, "keda-operator", operator.Done(), kedaStart); err != nil {
		return nil, fmt.Errorf("keda-operator not ready (log: %s): %w", operator.LogPath(), err)
	}
	adapter, err := process.Start(binaryPath("keda-adapter"), []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(adapterPort),
		"--cert-dir=" + certDir,
		"--tls-cert-file=" + filepath.Join(certDir, "tls.crt"),
		"--tls-private-key-file=" + filepath.Join(certDir, "tls.key"),
		"--client-ca-file=" + filepath.Join(certDir, "ca.crt"),
		"--lister-kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--metrics-service-address=" + grpcAddress,
		// The adapter's own Prometheus metrics, on 127.0.0.1: KEDA's
		// adapter binds every interface on this port, with no flag for
		// the address; `make keda-tools` builds it patched to bind
		// 127.0.0.1 (see the Makefile).
		"--port=" + strconv.Itoa(adapterMetricsPort),
		"--zap-log-level=info",
	}, env, filepath.Join(s.Logs, "keda-adapter.log"))
	if err != nil {
		return nil, err
	}
	s.OnStop("keda-adapter", func() error { return adapter.Stop(10 * time.Second) })
	// The external metrics API through an ExternalName Service
	// "localhost", as for metrics-server's metrics API.
	externalMetrics := metricsserver.APIService{
		Group: "external.metrics.k8s.io", Version: "v1beta1",
		Namespace: KEDANamespace, Service: kedaAdapterService,
		Port: adapterPort, CABundle: caBundle, FieldManager: kedaFieldManager,
	}
	if err := metricsserver.RegisterAPIService(ctx, a.Env.Config, externalMetrics, kedaStart); err != nil {
		return nil, fmt.Errorf("%w (logs: %s, %s)", err, adapter.LogPath(), operator.LogPath())
	}
	return &KEDA{Operator: operator, Adapter: adapter}, nil
}

// writeKEDACerts writes ca.crt, tls.crt and tls.key into dir, the layout
// KEDA reads from its --cert-dir, and returns the CA certificate (PEM).
func writeKEDACerts(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := pki.NewCA("backfill-keda-ca")
	if err != nil {
		return nil, err
	}
	serviceDNS := kedaAdapterService + "." + KEDANamespace + ".svc"
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
