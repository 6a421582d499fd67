package report

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// The files of the certificate directory (--report-cert-dir), as a
// cert-manager Certificate's or a kubernetes.io/tls Secret's keys name
// them.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// Server is the HTTPS server of the report endpoint, a manager Runnable.
type Server struct {
	addr    string
	certDir string
	handler http.Handler
}

// NewServer serves handler over HTTPS on addr with the certificate and key
// of certDir, reloaded when they change (a renewed certificate needs no
// restart).
func NewServer(addr, certDir string, handler http.Handler) *Server {
	return &Server{addr: addr, certDir: certDir, handler: handler}
}

// NeedLeaderElection is true: the endpoint serves the leader only.
// Reports go to the progress.Store of the manager they reach, and only the
// leader's controller reads its store: a standby would accept reports that
// reach no status. A standby does not listen, so its endpoint refuses
// connections; the Service in front must route to the leader (or training
// code retries until it reaches it, as the report helper does).
func (s *Server) NeedLeaderElection() bool { return true }

// Start serves until ctx ends, then lets the reports in flight finish.
func (s *Server) Start(ctx context.Context) error {
	watcher, err := certwatcher.New(filepath.Join(s.certDir, CertFile), filepath.Join(s.certDir, KeyFile))
	if err != nil {
		return fmt.Errorf("loading the report endpoint's certificate from --report-cert-dir=%s (it must hold %s and %s): %w", s.certDir, CertFile, KeyFile, err)
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listening on --report-bind-address=%s: %w", s.addr, err)
	}
	srv := &http.Server{
		Handler: s.handler,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: watcher.GetCertificate,
		},
		// HTTP/1.1 only: a report is one small request, and HTTP/2 brings
		// its own denial-of-service surface (CVE-2023-44487).
		TLSNextProto:      map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// A token is a kilobyte or two.
		MaxHeaderBytes: 64 << 10,
	}
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	go func() { _ = watcher.Start(watchCtx) }()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving progress reports: %w", err)
	}
	return nil
}
