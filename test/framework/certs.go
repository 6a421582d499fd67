package framework

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"path/filepath"

	"github.com/backfill-dev/backfill/internal/devcluster/pki"
)

// WriteServingCert writes into dir a new certificate authority (ca.crt)
// and a serving certificate it signs (tls.crt, tls.key) for the IP
// addresses and DNS names given: the layout of a kubernetes.io/tls Secret,
// as servers with a --*-cert-dir flag read it.
func WriteServingCert(dir string, ips []net.IP, dnsNames ...string) error {
	ca, err := pki.NewCA("backfill test CA")
	if err != nil {
		return err
	}
	cert, err := ca.Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "backfill test server"},
		IPAddresses: ips,
		DNSNames:    dnsNames,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return err
	}
	if err := ca.WriteCert(filepath.Join(dir, "ca.crt"), ""); err != nil {
		return err
	}
	return cert.WriteCert(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
}
