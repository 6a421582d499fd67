package report_test

import (
	"context"
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

	"github.com/backfill-dev/backfill/internal/report"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestServer: the endpoint serves HTTPS with the certificate of its
// directory, HTTP/1.1 only, and stops with its context.
func TestServer(t *testing.T) {
	dir := t.TempDir()
	if err := framework.WriteServingCert(dir, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		t.Fatal(err)
	}
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- report.NewServer(addr, dir, hello).Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})

	ca, err := os.ReadFile(filepath.Join(dir, report.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}}, ForceAttemptHTTP2: true}
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err = c.Get("https://" + addr + "/"); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("GET over HTTPS: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || resp.ProtoMajor != 1 {
		t.Errorf("%s %d, want HTTP/1.1 418", resp.Proto, resp.StatusCode)
	}
	// A client that does not trust the CA is refused.
	_, err = (&http.Client{Timeout: 5 * time.Second}).Get("https://" + addr + "/")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("a client without the CA: %v, want an unknown authority", err)
	}
}

// TestServerNeedsItsCertificate: a directory without the certificate is an
// error that names the flag and the files.
func TestServerNeedsItsCertificate(t *testing.T) {
	err := report.NewServer("127.0.0.1:0", t.TempDir(), http.NotFoundHandler()).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--report-cert-dir") || !strings.Contains(err.Error(), "tls.crt") {
		t.Errorf("error %v, want one naming --report-cert-dir and tls.crt", err)
	}
}

// The server runs on the leader only.
func TestServerNeedsLeaderElection(t *testing.T) {
	if !report.NewServer(":0", "", nil).NeedLeaderElection() {
		t.Error("the report server would run on standbys too")
	}
}
