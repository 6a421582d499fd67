package devcluster

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// binaries are the tools the local cluster runs, all built by hack/tools;
// the demo's GPU inference needs KEDA's too (kedaBinaries), which the
// dev-tools target builds as well.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "metrics-server", "prometheus", "alertmanager"}

// queueBinaries are those of `dev --kueue`, which the queue-tools target
// builds.
var queueBinaries = []string{"kueue"}

// ensureTools builds the missing binaries through the checkout's Makefile,
// streaming its progress, or says how to get them.
func ensureTools(opts Options, out io.Writer) error {
	var missing []string
	needed, targets := slices.Clone(binaries), []string{"dev-tools"}
	if opts.runsInference() {
		needed = append(needed, kedaBinaries...)
	}
	if opts.Kueue {
		needed, targets = append(needed, queueBinaries...), append(targets, "queue-tools")
	}
	for _, b := range needed {
		if _, err := os.Stat(filepath.Join(opts.BinDir, b)); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if opts.RepoDir == "" {
		return fmt.Errorf("%v missing from %s: run `make %s` in a backfill checkout, or `backfill dev up` from inside one", missing, opts.BinDir, strings.Join(targets, " "))
	}
	fmt.Fprintf(out, "Building %v into %s from their Go modules.\nThe first build takes 32-45 minutes (KEDA alone 7-15) and about 3.5 GB of memory; later starts take seconds.\n", missing, opts.BinDir)
	cmd := exec.Command("make", append([]string{"-C", opts.RepoDir, "BIN=" + opts.BinDir}, targets...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the tools: %w", err)
	}
	return nil
}

// FindRepo returns the backfill checkout holding dir, or "" when dir is not
// inside one.
func FindRepo(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "tools", "kubernetes", "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
