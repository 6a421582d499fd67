// Package keda runs KEDA v2 (its operator and its metrics apiserver, the
// adapter, built by `make keda-tools`) on loopback beside a local
// apiserver: the arguments, environment and certificates both need, shared
// by `backfill dev` and the suites. The caller starts the processes.
//
// KEDA's certificate rotation (which writes a Secret and patches the
// APIService) is off: one certificate, issued for 127.0.0.1 and the
// adapter Service's name and usable by client and server, serves the
// operator's gRPC metrics service, the adapter's client of it (mutual TLS)
// and the adapter's API.
package keda

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
	"github.com/backfill-dev/backfill/internal/devcluster/pki"
)

// KEDA's namespace, and the Service of its adapter, named as KEDA's own
// manifests name them.
const (
	Namespace      = "keda"
	AdapterService = "keda-metrics-apiserver"
)

// Ports are the loopback ports KEDA's two processes listen on.
type Ports struct {
	// GRPC is the operator's metrics service, which the adapter asks.
	GRPC, Probe, OperatorMetrics int
	// Adapter serves external.metrics.k8s.io; AdapterMetrics its own
	// Prometheus metrics.
	Adapter, AdapterMetrics int
}

// PortsOf takes KEDA's ports from five free ones.
func PortsOf(free []int) Ports {
	return Ports{GRPC: free[0], Probe: free[1], OperatorMetrics: free[2], Adapter: free[3], AdapterMetrics: free[4]}
}

// ReadyURL is the operator's readiness probe.
func (p Ports) ReadyURL() string { return "http://" + loopback(p.Probe) + "/readyz" }

// Env is both processes' environment: the admin kubeconfig, every
// namespace watched, KEDA's own objects in Namespace.
func Env(kubeconfig string) []string {
	return append(os.Environ(),
		"KUBECONFIG="+kubeconfig,
		"WATCH_NAMESPACE=", // every namespace
		"POD_NAMESPACE="+Namespace,
		"KEDA_CLUSTER_OBJECT_NAMESPACE="+Namespace,
	)
}

// OperatorArgs are keda-operator's flags, its certificates in certDir.
func OperatorArgs(certDir string, p Ports) []string {
	return []string{
		"--leader-elect=false",
		"--enable-cert-rotation=false",
		"--cert-dir=" + certDir,
		"--ca-dir=" + certDir,
		"--metrics-service-bind-address=" + loopback(p.GRPC),
		"--health-probe-bind-address=" + loopback(p.Probe),
		"--metrics-bind-address=" + loopback(p.OperatorMetrics),
		"--zap-log-level=info",
	}
}

// AdapterArgs are keda-adapter's flags, its certificates in certDir.
func AdapterArgs(certDir, kubeconfig string, p Ports) []string {
	return []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.Adapter),
		"--cert-dir=" + certDir,
		"--tls-cert-file=" + filepath.Join(certDir, "tls.crt"),
		"--tls-private-key-file=" + filepath.Join(certDir, "tls.key"),
		"--client-ca-file=" + filepath.Join(certDir, "ca.crt"),
		"--lister-kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--metrics-service-address=" + loopback(p.GRPC),
		// The adapter's own Prometheus metrics: KEDA's adapter binds every
		// interface on this port, with no flag for the address; `make
		// keda-tools` builds it patched to bind 127.0.0.1 (see the
		// Makefile).
		"--port=" + strconv.Itoa(p.AdapterMetrics),
		"--zap-log-level=info",
	}
}

// ExternalMetricsAPI is the adapter's external.metrics.k8s.io/v1beta1,
// registered through an ExternalName Service "localhost" as
// metrics-server's metrics API is.
func ExternalMetricsAPI(p Ports, caBundle []byte, fieldManager string) metricsserver.APIService {
	return metricsserver.APIService{
		Group: "external.metrics.k8s.io", Version: "v1beta1",
		Namespace: Namespace, Service: AdapterService,
		Port: p.Adapter, CABundle: caBundle, FieldManager: fieldManager,
	}
}

// WriteCerts writes ca.crt, tls.crt and tls.key into dir, the layout KEDA
// reads from its --cert-dir, under a new CA named caName, and returns the
// CA certificate (PEM).
func WriteCerts(dir, caName string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := pki.NewCA(caName)
	if err != nil {
		return nil, err
	}
	serviceDNS := AdapterService + "." + Namespace + ".svc"
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

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
