//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

// doctorResult is one result of `backfill doctor -o json`.
type doctorResult struct {
	Check   string `json:"check"`
	Status  string `json:"status"`
	Object  string `json:"object"`
	Finding string `json:"finding"`
	Fix     string `json:"fix"`
}

// doctorReport is the whole of `backfill doctor -o json`, with its exit code.
type doctorReport struct {
	Results  []doctorResult `json:"results"`
	Failed   bool           `json:"failed"`
	exitCode int
	raw      string
}

// runDoctor runs `backfill doctor -o json args...` against the cluster.
func (dc *devCluster) runDoctor(t *testing.T, args ...string) doctorReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{"doctor", "-o", "json", "--kubeconfig", dc.state.Kubeconfig}, args...)
	cmd := exec.CommandContext(ctx, backfill, full...)
	cmd.Dir = framework.RepoRoot()
	out, err := cmd.Output()
	r := doctorReport{raw: string(out)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.exitCode = exit.ExitCode()
	case err != nil:
		t.Fatalf("backfill %s: %v", strings.Join(full, " "), err)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("backfill %s printed no report (%v):\n%s", strings.Join(full, " "), err, out)
	}
	return r
}

// byStatus lists the results of a status as "check object: finding".
func (r doctorReport) byStatus(status string) []string {
	var out []string
	for _, res := range r.Results {
		if res.Status == status {
			out = append(out, fmt.Sprintf("%s %s: %s", res.Check, res.Object, res.Finding))
		}
	}
	return out
}

// TestDoctorOnDevCluster runs doctor on the demo cluster: once the demo
// settles it finds nothing to FAIL, with the Prometheus checks run against
// the cluster's own Prometheus; then a crash-looping job whose log says
// CUDA_ERROR_NO_DEVICE is named, with the fix for it.
func TestDoctorOnDevCluster(t *testing.T) {
	dc := startCluster(t, "--demo=true")

	// The demo settles once its TFJobs' pods run and Prometheus has
	// scraped them: until then the cockpit's offline panels are empty.
	var last doctorReport
	waitFor(t, 3*time.Minute, "doctor to find no FAIL, and every Prometheus check OK, on the demo cluster", func(context.Context) (bool, string, error) {
		last = dc.runDoctor(t, "-A", "--prometheus-url", dc.state.Prometheus)
		var notOK []string
		for _, r := range last.Results {
			if strings.HasPrefix(r.Check, "prometheus-") && r.Status != "OK" {
				notOK = append(notOK, r.Object+": "+r.Finding)
			}
		}
		return last.exitCode == 0 && !last.Failed && len(notOK) == 0, strings.Join(append(last.byStatus("FAIL"), notOK...), "; "), nil
	})
	t.Logf("doctor -A on the demo cluster:\n%s", last.raw)
	seen := map[string]bool{}
	for _, r := range last.Results {
		seen[r.Check] = true
		if r.Status == "SKIP" {
			t.Errorf("a check was skipped with a Prometheus URL given: %+v", r)
		}
	}
	for _, check := range []string{"tfjob-crd", "operator", "pending-resources", "offline-priority", "gpu-nodes", "crash-loop", "prometheus-targets", "prometheus-data"} {
		if !seen[check] {
			t.Errorf("no result of check %s", check)
		}
	}
	for _, r := range last.Results {
		if strings.HasPrefix(r.Check, "prometheus-") && r.Status != "OK" {
			t.Errorf("Prometheus check not OK on the local cluster: %+v", r)
		}
	}

	t.Run("crash loop with CUDA_ERROR_NO_DEVICE", func(t *testing.T) { testDoctorCrashLoop(t, dc) })
}

// testDoctorCrashLoop starts a job whose container crash-loops printing
// CUDA_ERROR_NO_DEVICE, and expects doctor to read that from its log. The
// Prometheus URL comes from the cluster's state directory this time.
func testDoctorCrashLoop(t *testing.T, dc *devCluster) {
	const ns = "doctor-crash"
	createNamespace(t, dc.client, ns)
	job := makeTFJob(ns, "no-gpu").RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
	annotations := job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Annotations
	annotations[kwok.SimCrashLoopAnnotation] = "true"
	annotations[kwok.SimLogAnnotation] = "cuInit failed: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
	createTFJob(t, dc.client, job)
	waitFor(t, 2*time.Minute, "the worker in CrashLoopBackOff after a restart", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, dc.client, ns, "no-gpu")
		if err != nil || len(pods) != 1 {
			return false, fmt.Sprint(err, describePods(pods)), nil
		}
		for _, cs := range pods[0].Status.ContainerStatuses {
			if cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" && cs.RestartCount >= 1 {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%+v", pods[0].Status.ContainerStatuses), nil
	})

	r := dc.runDoctor(t, "no-gpu", "-n", ns, "--dev-state-dir", dc.stateDir)
	t.Logf("doctor no-gpu -n %s:\n%s", ns, r.raw)
	if r.exitCode != 1 {
		t.Errorf("exit code %d, want 1", r.exitCode)
	}
	var crash []doctorResult
	for _, res := range r.Results {
		if res.Check == "crash-loop" && res.Status == "FAIL" {
			crash = append(crash, res)
		}
		if res.Status == "SKIP" {
			t.Errorf("Prometheus checks skipped although the state directory names the cluster's Prometheus: %+v", res)
		}
	}
	if len(crash) != 1 {
		t.Fatalf("want one crash-loop FAIL, got %+v", r.Results)
	}
	if !strings.Contains(crash[0].Finding, "CrashLoopBackOff") || !strings.Contains(crash[0].Finding, "CUDA_ERROR_NO_DEVICE") {
		t.Errorf("finding %q: want CrashLoopBackOff and CUDA_ERROR_NO_DEVICE named", crash[0].Finding)
	}
	if !strings.Contains(crash[0].Fix, "request nvidia.com/gpu") {
		t.Errorf("fix %q: want the fix for a container that sees no GPU", crash[0].Fix)
	}
}
