package metricsserver

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"path/filepath"

	"github.com/backfill-dev/backfill/internal/devcluster/pki"
)

// ServiceName and Namespace name the Service the APIService points at. The
// apiserver verifies metrics-server's certificate for the DNS name
// <ServiceName>.<Namespace>.svc, whatever address the Service resolves to.
const (
	ServiceName = "metrics-server"
	Namespace   = "kube-system"
)

// Serving is metrics-server's serving certificate and the CA that signed
// it, which the APIService carries as its caBundle.
type Serving struct {
	CAFile, CertFile, KeyFile string
	// CABundle is the CA certificate, PEM-encoded.
	CABundle []byte
}

// WriteServing writes a new CA and a serving certificate it signed into
// dir, for the name the apiserver verifies and for 127.0.0.1 and localhost,
// where the readiness check (WaitServing) reaches metrics-server.
func WriteServing(dir string) (Serving, error) {
	s := Serving{
		CAFile:   filepath.Join(dir, "metrics-server-ca.crt"),
		CertFile: filepath.Join(dir, "metrics-server.crt"),
		KeyFile:  filepath.Join(dir, "metrics-server.key"),
	}
	ca, err := pki.NewCA("backfill-metrics-server-ca")
	if err != nil {
		return s, err
	}
	serviceDNS := fmt.Sprintf("%s.%s.svc", ServiceName, Namespace)
	cert, err := ca.Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: serviceDNS},
		DNSNames:    []string{serviceDNS, "localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return s, err
	}
	if err := ca.WriteCert(s.CAFile, ""); err != nil {
		return s, err
	}
	s.CABundle = ca.CertPEM()
	return s, cert.WriteCert(s.CertFile, s.KeyFile)
}
