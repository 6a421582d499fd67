//go:build integration

// Package cli runs the backfill binary's kubectl-style commands (submit,
// get, describe, logs) against a real kube-apiserver and etcd with the
// TFJob CRD, and a real kube-scheduler for the pending pods: what a user
// types, with the exit codes and the one-line errors they see.
package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/test/framework"
)

var (
	apiServer  *framework.APIServer
	kubeconfig string
	backfill   string // the binary under test
)

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{Name: "cli", Backfill: true, Scheduler: true}, func(s *framework.Suite) error {
		apiServer, backfill = s.APIServer, s.Backfill
		var err error
		kubeconfig, err = apiServer.AdminKubeconfig(s.Logs, "user")
		return err
	}))
}

// result is what one run of the binary printed and how it exited.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs backfill with args against the suite's apiserver, as an admin.
func cli(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return cliAs(t, kubeconfig, stdin, args...)
}

// cliAs runs backfill with args as the user of the kubeconfig at path.
func cliAs(t *testing.T, path, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, backfill, append(args, "--kubeconfig", path)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running backfill %s: %v", strings.Join(args, " "), err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// wantFailure checks a run failed with code and one line of stderr
// holding every one of wants.
func (r result) wantFailure(t *testing.T, code int, wants ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	if lines := strings.Count(strings.TrimSpace(r.stderr), "\n") + 1; lines != 1 {
		t.Errorf("stderr has %d lines, want one:\n%s", lines, r.stderr)
	}
	for _, want := range wants {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not say %q", r.stderr, want)
		}
	}
}

func (r result) wantSuccess(t *testing.T) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

var namespaceSeq atomic.Int64

// newNamespace creates a namespace of its own for the test; the suite's
// etcd goes away with it, so nothing is cleaned up.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("cli-%d", namespaceSeq.Add(1))
	if err := apiServer.CreateNamespace(context.Background(), name); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// writeFile writes a file of the test's and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
