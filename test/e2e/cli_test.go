//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/test/framework"
)

// cliJob is what an ML engineer submits: two workers that print a CUDA
// error line and run for 40 s of simulated training.
const cliJob = `apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: cli-mnist
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            backfill.dev/sim-duration: 40s
            backfill.dev/sim-log: "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
        spec:
          containers:
          - name: tensorflow
            image: tensorflow/tensorflow:2.15.0
            resources:
              requests:
                cpu: "1"
                nvidia.com/gpu: "1"
              limits:
                nvidia.com/gpu: "1"
`

// crasherJob's one worker keeps crashing.
const crasherJob = `apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: cli-crasher
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            backfill.dev/sim-crash-loop: "true"
        spec:
          containers:
          - name: tensorflow
            image: tensorflow/tensorflow:2.15.0
`

// The plugin end to end on the local cluster: installed with make install
// (into temporary directories) and run by kubectl, it submits and waits, lists, describes, and shows the
// simulated containers' logs, following them, and sees a crash loop.
func TestCLIOnTheLocalCluster(t *testing.T) {
	dc := startCluster(t)
	// make install's own recipe, with BIN moved too: the shared bin/backfill,
	// which other suites may be running, stays as it is.
	pluginDir := t.TempDir()
	install := exec.Command("make", "install", "BIN="+t.TempDir(), "BINDIR="+pluginDir)
	install.Dir = framework.RepoRoot()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if target, err := os.Readlink(filepath.Join(pluginDir, "kubectl-backfill")); err != nil || target != "backfill" {
		t.Fatalf("make install left kubectl-backfill -> %q (%v), want a link to backfill", target, err)
	}
	// kubectl finds the plugin on PATH, as it would for a user.
	kubectl := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(framework.BinDir(), "kubectl"), args...)
		cmd.Env = append(os.Environ(), "PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+dc.state.Kubeconfig)
		cmd.Stdin = strings.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}

	jobFile, crasherFile := filepath.Join(pluginDir, "mnist.yaml"), filepath.Join(pluginDir, "crasher.yaml")
	for path, content := range map[string]string{jobFile: cliJob, crasherFile: crasherJob} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := kubectl("", "backfill", "submit", "-f", jobFile, "-f", crasherFile, "--wait", "--timeout", "2m")
	if err != nil {
		t.Fatalf("kubectl backfill submit --wait: %v\n%s", err, out)
	}
	for _, want := range []string{"tfjob.kubeflow.org/cli-mnist created", "tfjob.kubeflow.org/cli-crasher created", "cli-mnist: Running, 2/2 replicas running"} {
		if !strings.Contains(out, want) {
			t.Errorf("submit output does not say %q:\n%s", want, out)
		}
	}

	out, err = kubectl("", "backfill", "get", "-o", "wide")
	if err != nil || !strings.Contains(oneSpaced(out), "cli-mnist Running 2/2 0 0") || !strings.Contains(out, "Worker:2/2") || !strings.Contains(out, "backfill-offline") {
		t.Errorf("kubectl backfill get -o wide: %v\n%s", err, out)
	}

	out, err = kubectl("", "backfill", "describe", "cli-mnist")
	if err != nil {
		t.Fatalf("describe: %v\n%s", err, out)
	}
	for _, want := range []string{"State:           Running", "Cluster:  worker=2", "worker:1", "Placement:\n  gpu-"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe does not say %q:\n%s", want, out)
		}
	}

	waitFor(t, time.Minute, "the simulated log through the apiserver", func(context.Context) (bool, string, error) {
		out, err := kubectl("", "backfill", "logs", "cli-mnist")
		return err == nil && strings.Contains(out, "Started server with target: grpc://cli-mnist-worker-0 (task worker:0; cluster worker=2)") &&
			strings.Contains(out, "CUDA_ERROR_NO_DEVICE"), out, nil
	})
	out, err = kubectl("", "backfill", "logs", "cli-mnist", "--all-replicas", "--tail", "1")
	if err != nil || !strings.Contains(out, "[worker-0] ") || !strings.Contains(out, "[worker-1] ") {
		t.Errorf("logs --all-replicas: %v\n%s", err, out)
	}
	// kubectl's own logs read the same stream.
	if out, err := kubectl("", "logs", "cli-mnist-worker-1"); err != nil || !strings.Contains(out, "CUDA_ERROR_NO_DEVICE") {
		t.Errorf("kubectl logs: %v\n%s", err, out)
	}
	followUntilAStep(t, dc.state.Kubeconfig, pluginDir)

	waitFor(t, time.Minute, "the crash loop in describe", func(context.Context) (bool, string, error) {
		out, err := kubectl("", "backfill", "describe", "cli-crasher")
		return err == nil && crashLoopRow.MatchString(oneSpaced(out)), out, nil
	})
	if out, err := kubectl("", "backfill", "logs", "cli-crasher", "--previous"); err != nil || !strings.Contains(out, "Started server with target: grpc://cli-crasher-worker-0") {
		t.Errorf("logs --previous of the crash-looping replica: %v\n%s", err, out)
	}
	if out, err := kubectl("", "backfill", "get", "cli-crasher"); err != nil || !crashLoopRestarts.MatchString(oneSpaced(out)) {
		t.Errorf("get does not count the crash loop's restarts: %v\n%s", err, out)
	}

	// The job ends after its simulated training: waiting for done succeeds.
	out, err = kubectl("", "backfill", "submit", "-f", jobFile, "--wait-for=done", "--timeout", "2m")
	if err != nil || !strings.Contains(out, "cli-mnist unchanged") || !strings.Contains(out, "cli-mnist: Succeeded") {
		t.Errorf("submit --wait-for=done: %v\n%s", err, out)
	}
}

// followUntilAStep runs `logs -f` and stops it once a training step line
// has streamed in, which the simulation writes every ten seconds.
func followUntilAStep(t *testing.T, kubeconfig, pluginDir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(pluginDir, "kubectl-backfill"), "logs", "cli-mnist", "--replica", "worker-1", "-f", "--kubeconfig", kubeconfig)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill() // the process this test started, by its PID
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.HasPrefix(sc.Text(), "step ") {
			return
		}
	}
	t.Errorf("logs -f ended without a training step (%v); saw:\n%s", ctx.Err(), strings.Join(seen, "\n"))
}

// crashLoopRow is describe's row of a pod crash-looping with restarts.
var crashLoopRow = regexp.MustCompile(`cli-crasher-worker-0 CrashLoopBackOff false [1-9]`)

// crashLoopRestarts is get's row of the crash-looping job, restarts counted.
var crashLoopRestarts = regexp.MustCompile(`cli-crasher Running [01]/1 [1-9]`)

// oneSpaced collapses runs of spaces, so that table rows compare by cells.
func oneSpaced(s string) string {
	var lines []string
	for line := range strings.SplitSeq(s, "\n") {
		lines = append(lines, strings.Join(strings.Fields(line), " "))
	}
	return strings.Join(lines, "\n")
}
