// Package framework starts the real Kubernetes binaries that hack/tools
// builds into bin/, for the integration and end-to-end suites.
package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// RepoRoot is the root of the backfill repository.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// BinDir is where hack/tools puts the binaries; BACKFILL_BIN overrides it.
func BinDir() string {
	if dir := os.Getenv("BACKFILL_BIN"); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "bin")
}

// requireBinaries fails with the command that builds what is missing.
func requireBinaries(names ...string) error {
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(BinDir(), name)); err != nil {
			return fmt.Errorf("%s is missing from %s: run `make tools` (the first build takes several minutes)", name, BinDir())
		}
	}
	return nil
}

// ExamplesDir holds the example manifests: the seed's TFJobs, unchanged.
func ExamplesDir() string {
	return filepath.Join(RepoRoot(), "examples")
}
