//go:build integration

// Package prometheus runs the real Prometheus that hack/tools/prometheus
// builds into bin/ against the configuration promconfig generates, scraping
// the GPU simulator (gpusim) started in-process: the local cluster's
// monitoring path from simulated GPU to PromQL answer, without a cluster.
package prometheus

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/test/framework"
)

// timeout bounds every wait of the suite. The first scrape of a target
// comes up to one scrape interval (5 s) after Prometheus starts, and the
// machines running the suite are often busy.
const timeout = 60 * time.Second

// binary is bin/<name>; a missing one fails t with the command that builds it.
func binary(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(framework.BinDir(), name)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is missing: run `make tools` (Prometheus builds from source in several minutes the first time): %v", path, err)
	}
	return path
}
