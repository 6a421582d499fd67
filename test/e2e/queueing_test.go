//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/devcluster"
)

// queuedJob is a job of 4 GPUs: the queue of `dev --kueue` holds 4, so
// of two such jobs one waits for the other.
func queuedJob(name string) string {
	return `apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: ` + name + `
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 4
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            backfill.dev/sim-duration: 25s
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
}

// `backfill dev --kueue` as a user meets it: two jobs submitted to the
// ready-made queue, which holds one of them; get shows the other Queued,
// describe says by which queue and why, and it starts once the first
// finishes.
func TestQueueingOnDevCluster(t *testing.T) {
	dc := startCluster(t, "--kueue", "--cpu-nodes=1", "--gpu-nodes=1")
	cli := func(args ...string) (string, error) {
		cmd := exec.Command(backfill, append(args, "--kubeconfig", dc.state.Kubeconfig, "-n", devcluster.QueueNamespace)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	file := filepath.Join(t.TempDir(), "jobs.yaml")
	if err := os.WriteFile(file, []byte(queuedJob("queued-a")+"---\n"+queuedJob("queued-b")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := cli("submit", "-f", file, "--queue", devcluster.QueueName); err != nil {
		t.Fatalf("backfill submit --queue: %v\n%s", err, out)
	}
	if out, err := cli("submit", "-f", file, "--queue", "nowhere", "--dry-run"); err == nil || !strings.Contains(out, "LocalQueue nowhere, which does not exist") {
		t.Errorf("submit to a missing queue: %v, want a refusal naming it:\n%s", err, out)
	}

	c := dc.client
	ns := devcluster.QueueNamespace
	waitFor(t, 2*time.Minute, "queued-a running", podsRunning(c, ns, "queued-a", 4))
	out, err := cli("get")
	if err != nil || !strings.Contains(oneSpaced(out), "queued-b Queued 0/4") {
		t.Errorf("backfill get does not show queued-b Queued: %v\n%s", err, out)
	}
	out, err = cli("describe", "queued-b")
	if err != nil || !strings.Contains(out, devcluster.QueueName) || !strings.Contains(out, "insufficient unused quota") {
		t.Errorf("backfill describe queued-b does not say which queue holds it and why: %v\n%s", err, out)
	}
	pods, err := jobPods(context.Background(), c, ns, "queued-b")
	if err != nil || len(pods) != 0 {
		t.Errorf("queued-b has %d pods (%v) while queued", len(pods), err)
	}

	waitFor(t, 2*time.Minute, "queued-a succeeded", jobSucceeds(c, ns, "queued-a"))
	waitFor(t, 2*time.Minute, "queued-b running after queued-a", podsRunning(c, ns, "queued-b", 4))
	waitFor(t, 2*time.Minute, "queued-b succeeded", jobSucceeds(c, ns, "queued-b"))
}
