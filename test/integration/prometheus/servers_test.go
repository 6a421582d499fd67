//go:build integration

package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/devcluster/gpusim"
	"github.com/backfill-dev/backfill/internal/devcluster/process"
	"github.com/backfill-dev/backfill/test/framework"
)

// startGPUSim serves the simulator for l on a free loopback port until t
// ends, and returns its address.
func startGPUSim(t *testing.T, l gpusim.Lister) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listening for gpusim: %v", err)
	}
	srv := gpusim.NewServer(ln.Addr().String(), l)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutting gpusim down: %v", err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("gpusim: %v", err)
		}
	})
	return ln.Addr().String()
}

// prometheusServer is a bin/prometheus the test started.
type prometheusServer struct {
	proc *process.Process
	url  string // http://127.0.0.1:PORT
}

// startPrometheus checks config with promtool, then runs bin/prometheus with
// it on addr and a TSDB in a temporary directory, and stops it by its PID
// (SIGTERM, then a kill after 10 s) when t ends. Prometheus's log is shown
// if t failed.
func startPrometheus(t *testing.T, addr string, config []byte) *prometheusServer {
	t.Helper()
	return startPrometheusOn(t, addr, config, filepath.Join(t.TempDir(), "data"))
}

// startPrometheusOn is startPrometheus on the TSDB in dataDir, which may
// hold blocks already (promtool tsdb create-blocks-from).
func startPrometheusOn(t *testing.T, addr string, config []byte, dataDir string) *prometheusServer {
	t.Helper()
	dir := t.TempDir()
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, config, 0o644); err != nil {
		t.Fatalf("Writing %s: %v", configPath, err)
	}
	checkConfig(t, configPath)

	logPath := filepath.Join(dir, "prometheus.log")
	proc, err := process.Start(binary(t, "prometheus"), []string{
		"--config.file=" + configPath,
		"--storage.tsdb.path=" + dataDir,
		"--web.listen-address=" + addr,
	}, nil, logPath)
	if err != nil {
		t.Fatalf("Starting prometheus: %v", err)
	}
	t.Cleanup(func() {
		if err := proc.Stop(10 * time.Second); err != nil {
			t.Errorf("Stopping prometheus: %v", err)
		}
		if t.Failed() {
			log, _ := os.ReadFile(logPath)
			t.Logf("prometheus log:\n%s", log)
		}
	})
	return &prometheusServer{proc: proc, url: "http://" + addr}
}

// checkConfig runs `promtool check config`, so that a file Prometheus
// would reject fails here with promtool's reason.
func checkConfig(t *testing.T, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary(t, "promtool"), "check", "config", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}

// freeAddr is a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := framework.FreePort()
	if err != nil {
		t.Fatalf("Finding a free port: %v", err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}
