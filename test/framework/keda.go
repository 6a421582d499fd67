package framework

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/devcluster/pki"
	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// kedaStart bounds KEDA's start: installing its CRDs, the operator's
// readiness and the external metrics API becoming available.
const kedaStart = 2 * time.Minute

// KEDA's namespace, and the Service and APIService of its metrics
// apiserver (keda-adapter), named as KEDA's own manifests name them.
const (
	KEDANamespace      = "keda"
	kedaAdapterService = "keda-metrics-apiserver"
	kedaAPIServiceName = "v1beta1.external.metrics.k8s.io"
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
	if err := waitHTTPOK(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort), operator.Done()); err != nil {
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
		// The adapter's own Prometheus metrics: it binds every
		// interface on this port, and has no flag for the address.
		"--port=" + strconv.Itoa(adapterMetricsPort),
		"--zap-log-level=info",
	}, env, filepath.Join(s.Logs, "keda-adapter.log"))
	if err != nil {
		return nil, err
	}
	s.OnStop("keda-adapter", func() error { return adapter.Stop(10 * time.Second) })
	if err := registerKEDAAdapter(ctx, a, adapterPort, caBundle); err != nil {
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

// waitHTTPOK polls url until it answers 200, the process exits (done) or
// ctx ends.
func waitHTTPOK(ctx context.Context, url string, done <-chan struct{}) error {
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: status %s", url, resp.Status)
		}
		if ctx.Err() == nil {
			last = err
		}
		select {
		case <-done:
			return errors.New("it exited while starting")
		case <-ctx.Done():
			return fmt.Errorf("no answer 200 from %s: %w", url, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

var (
	serviceGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
)

// registerKEDAAdapter makes the apiserver serve external.metrics.k8s.io
// from the adapter on 127.0.0.1:port through an ExternalName Service
// "localhost" (as metricsserver.Register does for metrics-server), and
// waits until the apiserver reports the API available.
func registerKEDAAdapter(ctx context.Context, a *APIServer, port int, caBundle []byte) error {
	dyn, err := dynamic.NewForConfig(a.Env.Config)
	if err != nil {
		return err
	}
	apply := metav1.ApplyOptions{FieldManager: kedaFieldManager, Force: true}
	service := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   map[string]any{"name": kedaAdapterService, "namespace": KEDANamespace},
		"spec":       map[string]any{"type": "ExternalName", "externalName": "localhost"},
	}}
	if _, err := dyn.Resource(serviceGVR).Namespace(KEDANamespace).Apply(ctx, kedaAdapterService, service, apply); err != nil {
		return fmt.Errorf("applying Service %s/%s: %w", KEDANamespace, kedaAdapterService, err)
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiServiceGVR.GroupVersion().String(),
		"kind":       "APIService",
		"metadata":   map[string]any{"name": kedaAPIServiceName},
		"spec": map[string]any{
			"group":   "external.metrics.k8s.io",
			"version": "v1beta1",
			"service": map[string]any{
				"namespace": KEDANamespace,
				"name":      kedaAdapterService,
				"port":      int64(port),
			},
			"caBundle":             base64.StdEncoding.EncodeToString(caBundle),
			"groupPriorityMinimum": int64(100),
			"versionPriority":      int64(100),
		},
	}}
	if _, err := dyn.Resource(apiServiceGVR).Apply(ctx, kedaAPIServiceName, apiService, apply); err != nil {
		return fmt.Errorf("applying APIService %s: %w", kedaAPIServiceName, err)
	}
	last := "not read yet"
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		obj, err := dyn.Resource(apiServiceGVR).Get(ctx, kedaAPIServiceName, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // retried until the timeout
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			if cond, _ := c.(map[string]any); cond["type"] == "Available" {
				last = fmt.Sprintf("Available=%v %v: %v", cond["status"], cond["reason"], cond["message"])
				return cond["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("APIService %s not available (last: %s): %w", kedaAPIServiceName, last, err)
	}
	return nil
}
