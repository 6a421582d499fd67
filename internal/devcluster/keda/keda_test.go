package keda

import (
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"strings"
	"testing"
)

// The adapter's certificate verifies under the CA the apiserver is given,
// for the Service's name and for 127.0.0.1, as server and as client.
func TestWriteCerts(t *testing.T) {
	dir := t.TempDir()
	caPEM, err := WriteCerts(dir, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("the CA bundle holds no certificate")
	}
	for _, name := range []string{AdapterService + "." + Namespace + ".svc", "127.0.0.1"} {
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("%s, usage %v: %v", name, usage, err)
			}
		}
	}
}

// Every address either process listens on is loopback.
func TestArgsListenOnLoopback(t *testing.T) {
	p := PortsOf([]int{1, 2, 3, 4, 5})
	for _, arg := range append(OperatorArgs("/certs", p), AdapterArgs("/certs", "/kubeconfig", p)...) {
		name, value, _ := strings.Cut(arg, "=")
		if strings.Contains(name, "address") && !strings.HasPrefix(value, "127.0.0.1") {
			t.Errorf("%s: not on loopback", arg)
		}
	}
	if got := ExternalMetricsAPI(p, []byte("CA"), "fm"); got.Port != 4 || got.Name() != "v1beta1.external.metrics.k8s.io" {
		t.Errorf("external metrics API %+v: want port 4, v1beta1.external.metrics.k8s.io", got)
	}
}
