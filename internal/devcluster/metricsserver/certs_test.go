package metricsserver

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"strings"
	"testing"
)

// The apiserver verifies metrics-server's certificate for the Service's DNS
// name with the APIService's caBundle; the readiness check for 127.0.0.1.
func TestServingCertificateVerifiesForTheServiceAndLoopback(t *testing.T) {
	s, err := WriteServing(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	leaf := loadPair(t, s.CertFile, s.KeyFile)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(s.CABundle) {
		t.Fatal("the CA bundle holds no certificate")
	}
	if ca := readFile(t, s.CAFile); ca != string(s.CABundle) {
		t.Errorf("CAFile and CABundle differ")
	}
	for _, name := range []string{"metrics-server.kube-system.svc", "localhost", "127.0.0.1"} {
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			t.Errorf("verifying for %s: %v", name, err)
		}
	}
	// It is also metrics-server's client CA, which must accept no client.
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("the serving certificate verifies as a client certificate")
	}
}

// Aggregated servers accept the front proxy's user headers only from a
// client certificate of the front-proxy CA with the allowed name.
func TestFrontProxyClientCertificate(t *testing.T) {
	fp, err := WriteFrontProxy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	leaf := loadPair(t, fp.ClientCertFile, fp.ClientKeyFile)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(readFile(t, fp.CAFile)))
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("verifying the client certificate: %v", err)
	}
	if leaf.Subject.CommonName != FrontProxyClientName {
		t.Errorf("common name %q, want %q", leaf.Subject.CommonName, FrontProxyClientName)
	}
	flags := strings.Join(fp.APIServerFlags(), " ")
	for _, want := range []string{"--requestheader-client-ca-file=" + fp.CAFile, "--requestheader-allowed-names=" + FrontProxyClientName, "--proxy-client-cert-file=" + fp.ClientCertFile, "--proxy-client-key-file=" + fp.ClientKeyFile} {
		if !strings.Contains(flags, want) {
			t.Errorf("apiserver flags %q lack %q", flags, want)
		}
	}
}

// loadPair checks that the key matches the certificate and returns it.
func loadPair(t *testing.T, certFile, keyFile string) *x509.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatalf("loading %s and %s: %v", certFile, keyFile, err)
	}
	if info, err := os.Stat(keyFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v (%v), want 0600", keyFile, info.Mode().Perm(), err)
	}
	return pair.Leaf
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if block, _ := pem.Decode(data); block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("%s holds no PEM certificate", path)
	}
	return string(data)
}
