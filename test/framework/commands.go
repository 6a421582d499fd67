package framework

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildBackfill builds cmd/backfill into dir and returns the binary's path,
// so that a suite drives the command as a user does.
func BuildBackfill(dir string) (string, error) {
	bin := filepath.Join(dir, "backfill")
	build := exec.Command("go", "build", "-o", bin, "./cmd/backfill")
	build.Dir = RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building backfill: %w\n%s", err, out)
	}
	return bin, nil
}

// Helm runs bin/helm with a private home, so that no user's helm
// configuration or repositories play a part. The error carries helm's
// stderr.
func Helm(args ...string) ([]byte, error) {
	home, err := os.MkdirTemp("", "backfill-helm-home-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(home) }()
	cmd := exec.Command(filepath.Join(BinDir(), "helm"), args...)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
