//go:build integration

// Package report runs the manager in-process, its progress report endpoint
// on, against a real kube-apiserver and etcd: training code's side is
// played by the test, which POSTs reports over HTTPS with ServiceAccount
// tokens the TokenRequest API binds to the operator's real pods, and
// drives those pods the way a kubelet would, by writing their status.
package report

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/backfill-dev/backfill/internal/report"
	"github.com/backfill-dev/backfill/test/framework"
)

var (
	apiServer *framework.APIServer
	// clientset asks the TokenRequest and TokenReview APIs.
	clientset kubernetes.Interface
	// reportURL is the manager's report endpoint; reports trusts its CA.
	reportURL string
	reports   *http.Client
)

// stopNotice is long, so that a pod stopped within seconds was stopped by
// the checkpoint handshake, not by its notice running out.
const stopNotice = 60 * time.Second

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{Name: "report"}, prepare))
}

// prepare runs the manager with its report endpoint on a free loopback
// port, serving a certificate of a test CA that reports trusts, and waits
// until the endpoint answers.
func prepare(s *framework.Suite) error {
	apiServer = s.APIServer
	var err error
	if clientset, err = kubernetes.NewForConfig(apiServer.Env.Config); err != nil {
		return err
	}
	certDir := filepath.Join(s.Logs, "report-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	if err := framework.WriteServingCert(certDir, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return err
	}
	if reports, err = httpsClient(filepath.Join(certDir, report.CAFile)); err != nil {
		return err
	}
	port, err := framework.FreePort()
	if err != nil {
		return err
	}
	reportURL = fmt.Sprintf("https://127.0.0.1:%d", port)

	opts := framework.ManagerOptions()
	opts.Reclaim, opts.ColocationMetrics = false, false
	opts.StopNotice = stopNotice
	opts.ReportAddress, opts.ReportCertDir, opts.ReportURL = fmt.Sprintf("127.0.0.1:%d", port), certDir, reportURL
	if err := opts.Validate(); err != nil {
		return err
	}
	// The manager runs as if in a pod, which it labels as it leads.
	if err := createManagerPod(); err != nil {
		return err
	}
	return waitServing(s.StartManager(apiServer.Env.Config, opts))
}

// httpsClient trusts the CA of caFile only, as training code does with
// $BACKFILL_REPORT_CA.
func httpsClient(caFile string) (*http.Client, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the test CA is not PEM")
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}

// waitServing waits until the endpoint answers (a report without a token:
// 401), or the manager stops.
func waitServing(mgr *framework.Manager) error {
	deadline := time.Now().Add(framework.Timeout)
	for {
		resp, err := reports.Post(reportURL+"/v1/namespaces/x/tfjobs/y/progress", "application/json", strings.NewReader(`{"step": 0}`))
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
			return fmt.Errorf("the report endpoint answered %s to a report without a token, want 401", resp.Status)
		}
		select {
		case <-mgr.Done():
			return fmt.Errorf("the manager stopped: %w", mgr.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the report endpoint %s does not answer: %w", reportURL, err)
		}
	}
}
