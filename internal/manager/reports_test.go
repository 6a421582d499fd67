package manager

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-dev/backfill/internal/report"
)

// A certificate directory without its CA (the optional Secret not yet
// created) is told apart from a broken one: the first turns reports off,
// the second stops the manager.
func TestReportAccessMissingAndBrokenCA(t *testing.T) {
	opts := DefaultOptions()
	opts.ReportURL, opts.ReportCertDir = "https://backfill-reports.backfill-system.svc:9443", t.TempDir()
	if _, err := reportAccess(opts); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no ca.crt: error %v, want one that is fs.ErrNotExist", err)
	}
	if err := os.WriteFile(filepath.Join(opts.ReportCertDir, report.CAFile), []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := reportAccess(opts); err == nil || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a ca.crt that is not PEM: error %v, want one that says so", err)
	}
}
