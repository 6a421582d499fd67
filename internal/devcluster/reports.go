package devcluster

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/backfill-dev/backfill/internal/devcluster/pki"
	"github.com/backfill-dev/backfill/internal/report"
)

// The manager's report endpoint in the local cluster: HTTPS on loopback,
// with a CA of its own. Every manager of the cluster, the in-process one
// or several started by hand, is given the same address: only the leader
// listens.

// reportCertDir holds the endpoint's certificate, key and CA.
func (c *Cluster) reportCertDir() string { return filepath.Join(c.opts.StateDir, "pki", "reports") }

// reportAddress is where the leader serves reports, chosen once.
func (c *Cluster) reportAddress() string {
	if c.reportAddr == "" {
		if ports, err := c.freePorts(1); err == nil {
			c.reportAddr = loopback(ports[0])
		}
	}
	return c.reportAddr
}

// reportURL is the endpoint's base URL, as the training pods reach it.
func (c *Cluster) reportURL() string { return "https://" + c.reportAddress() }

// writeReportCerts makes the endpoint's CA and its serving certificate for
// 127.0.0.1 and localhost.
func writeReportCerts(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := pki.NewCA("backfill-reports-ca")
	if err != nil {
		return err
	}
	cert, err := ca.Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "backfill-reports"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return err
	}
	if err := ca.WriteCert(filepath.Join(dir, report.CAFile), ""); err != nil {
		return err
	}
	if err := cert.WriteCert(filepath.Join(dir, report.CertFile), filepath.Join(dir, report.KeyFile)); err != nil {
		return fmt.Errorf("writing the report endpoint's certificate: %w", err)
	}
	return nil
}
