//go:build integration

package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/backfill-dev/backfill/test/framework"
)

// doctorAny runs doctor with -o json and decodes the report, whatever the
// other checks say: earlier cases leave cluster-wide state (the value-100
// class) that makes every later run FAIL elsewhere. The exit code must
// still agree with the report.
func doctorAny(t *testing.T, args ...string) report {
	t.Helper()
	run := runDoctor(t, append(args, "-o", "json")...)
	var r report
	if err := json.Unmarshal([]byte(run.stdout), &r); err != nil {
		t.Fatalf("doctor %s printed no report (%v), exit code %d:\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, run.exitCode, run.stdout, run.stderr)
	}
	if want := map[bool]int{false: 0, true: 1}[r.Failed]; run.exitCode != want {
		t.Fatalf("doctor %s: exit code %d with failed=%v, want %d", strings.Join(args, " "), run.exitCode, r.Failed, want)
	}
	return r
}

// mustFindOf is the one result of check with status and object, after
// logging the check's results.
func (r report) mustFindOf(t *testing.T, check, status, object string, wants ...string) result {
	t.Helper()
	for _, res := range r.Results {
		if res.Check == check {
			t.Logf("%s %s %s: %s\n    fix: %s", res.Status, res.Check, res.Object, res.Finding, res.Fix)
		}
	}
	return r.mustFind(t, check, status, object, wants...)
}

// wantFix fails the test unless the fix contains every want.
func wantFix(t *testing.T, res result, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(res.Fix, want) {
			t.Errorf("%s fix %q: want %q in it", res.Check, res.Fix, want)
		}
	}
}

// doctorUntil runs doctor until the check reports status (Kueue's grace
// of 30 s has to pass on the apiserver's clock), and returns that report.
func doctorUntil(t *testing.T, check, status string, timeout time.Duration, args ...string) report {
	t.Helper()
	var last report
	err := wait.PollUntilContextTimeout(context.Background(), 2*time.Second, timeout, true, func(context.Context) (bool, error) {
		last = doctorAny(t, args...)
		return len(last.find(check, status, "")) > 0, nil
	})
	if err != nil {
		var seen []result
		for _, res := range last.Results {
			if res.Check == check {
				seen = append(seen, res)
			}
		}
		t.Fatalf("waiting for doctor to report %s %s: %v; last results: %+v", status, check, err, seen)
	}
	return last
}

// kubectl runs bin/kubectl as the suite's admin, as a user follows a
// fix, and returns its output.
func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := runKubectl(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func runKubectl(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(framework.BinDir(), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}
