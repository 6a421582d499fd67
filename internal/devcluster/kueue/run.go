package kueue

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/backfill-dev/backfill/internal/devcluster/pki"
	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// Options say how to run Kueue.
type Options struct {
	// BinDir holds bin/kueue and the kueue-manifests the build copies.
	BinDir string
	// Kubeconfig is an admin's: Kueue reads and writes across the cluster.
	Kubeconfig string
	// Dir holds Kueue's configuration and certificates.
	Dir string
	// WaitForPodsReady, when set, turns all-or-nothing admission on.
	WaitForPodsReady *WaitForPodsReady
}

// Kueue is Kueue ready to start: its command line, and what its webhook
// registrations and readiness check need.
type Kueue struct {
	// Binary and Args are the command that runs it; the PID it gets is
	// Kueue's own.
	Binary string
	Args   []string
	// WebhookPort is where its webhooks listen on 127.0.0.1.
	WebhookPort int
	// CABundle signed its serving certificate.
	CABundle []byte
	// HealthAddress serves /readyz.
	HealthAddress string
}

// metricsCertPath is where Kueue reads its metrics certificate when it
// does not manage its certificates itself. The path is fixed in its code.
const metricsCertPath = "/etc/kueue/metrics/certs"

// Prepare writes Kueue's configuration and certificates under o.Dir and
// returns the command that runs it. Start it (process.StartNamed), then
// RegisterWebhooks and WaitReady.
//
// Kueue insists on a certificate under /etc/kueue. Rather than write into
// the host's /etc, it runs in a mount namespace of its own where /etc is
// the host's with the certificate laid over it (a read-only overlay); as
// root that needs no more, otherwise a user namespace maps the user to
// root inside it.
func Prepare(o Options) (*Kueue, error) {
	ports, err := process.FreePorts(2)
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(o.Dir, "serving-certs")
	caBundle, err := writeServing(certDir)
	if err != nil {
		return nil, fmt.Errorf("writing Kueue's serving certificate: %w", err)
	}
	etc, err := writeEtcOverlay(o.Dir, certDir)
	if err != nil {
		return nil, err
	}
	config, err := writeConfig(o.Dir, o, ports[0], ports[1], certDir)
	if err != nil {
		return nil, fmt.Errorf("writing Kueue's configuration: %w", err)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, errors.New("Kueue runs in a mount namespace of its own and needs unshare(1): install util-linux")
	}
	binary := filepath.Join(o.BinDir, "kueue")
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%s is missing: run `make queue-tools` in a backfill checkout (the first build takes about 5 minutes)", binary)
	}
	args := unshareArgs(os.Geteuid() == 0)
	// The shell lays the overlay, then becomes Kueue: the PID recorded is
	// Kueue's own.
	args = append(args, "sh", "-c", `mount -t overlay overlay -o lowerdir="$1":/etc /etc && shift && exec "$@"`, "sh", etc,
		binary, "--config="+config, "--kubeconfig="+o.Kubeconfig,
		// The visibility API needs an aggregated apiserver of its own;
		// nothing here asks it.
		"--feature-gates=VisibilityOnDemand=false")
	return &Kueue{Binary: unshare, Args: args, WebhookPort: ports[1], CABundle: caBundle, HealthAddress: fmt.Sprintf("127.0.0.1:%d", ports[0])}, nil
}

// unshareArgs enter a private mount namespace; a user other than root
// also enters a user namespace, in which it may mount.
func unshareArgs(root bool) []string {
	if root {
		return []string{"--mount", "--propagation", "private", "--"}
	}
	return []string{"--user", "--map-root-user", "--mount", "--propagation", "private", "--"}
}

// writeEtcOverlay makes the directory laid over /etc: the metrics
// certificate at the path Kueue reads, the serving one reused.
func writeEtcOverlay(dir, certDir string) (string, error) {
	etc := filepath.Join(dir, "etc-overlay")
	certs := filepath.Join(etc, metricsCertPath[len("/etc/"):])
	if err := os.MkdirAll(certs, 0o755); err != nil {
		return "", err
	}
	for _, name := range []string{"tls.crt", "tls.key"} {
		data, err := os.ReadFile(filepath.Join(certDir, name))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(certs, name), data, 0o600); err != nil {
			return "", err
		}
	}
	return etc, nil
}

// writeServing writes a CA and a certificate it signed for 127.0.0.1 as
// tls.crt and tls.key in dir, where Kueue's webhook server reads them, and
// returns the CA the webhook registrations carry.
func writeServing(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ca, err := pki.NewCA("backfill-kueue-ca")
	if err != nil {
		return nil, err
	}
	cert, err := ca.Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kueue-webhook"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	return ca.CertPEM(), cert.WriteCert(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
}
