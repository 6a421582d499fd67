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

// KubernetesBinDir holds kube-apiserver, kube-controller-manager and
// kube-scheduler: bin/ unless BACKFILL_KUBERNETES_BIN names another build,
// as `make integration-oldest` does to run suites against the oldest
// Kubernetes backfill supports.
func KubernetesBinDir() string {
	if dir := os.Getenv("BACKFILL_KUBERNETES_BIN"); dir != "" {
		return dir
	}
	return BinDir()
}

// binaryPath is where the suites find the binary called name.
func binaryPath(name string) string {
	switch name {
	case "kube-apiserver", "kube-controller-manager", "kube-scheduler":
		return filepath.Join(KubernetesBinDir(), name)
	}
	return filepath.Join(BinDir(), name)
}

// requireBinaries fails with the command that builds what is missing.
func requireBinaries(names ...string) error {
	for _, name := range names {
		path := binaryPath(name)
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%s is missing: run `make tools` (the first build takes several minutes)", path)
		}
	}
	return nil
}

// ExamplesDir holds the example manifests: the seed's TFJobs, unchanged.
func ExamplesDir() string {
	return filepath.Join(RepoRoot(), "examples")
}
