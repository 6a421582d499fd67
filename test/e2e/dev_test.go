//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/devcluster"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestDevCluster starts `backfill dev up --detach` from nothing and checks
// what a newcomer is promised: every component healthy, the nodes Ready
// with their capacity, the demo TFJobs finishing with their progress
// reported, Prometheus holding the manager's metrics, container CPU use,
// the GPU simulator's series and the online service's simulated request
// latency with no target down, an alert of backfill's rules delivered by
// Alertmanager to the local webhook sink, the metrics API
// serving `kubectl top`, the online service's compressed day (training
// above what priority alone allows by night, evictions at the peak), the
// GPU inference's morning scale-up finding the GPUs training borrowed at
// night returned in time (GPU loans), the
// node agents' panels with data, their ceiling following the day; a
// second `dev up` refused; `dev down` leaving no process and no listening
// port behind.
func TestDevCluster(t *testing.T) {
	stateDir := t.TempDir()
	dev := func(args ...string) (string, error) {
		cmd := exec.Command(backfill, append([]string{"dev"}, append(args, "--state-dir", stateDir)...)...)
		cmd.Dir = framework.RepoRoot()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	started := time.Now()
	if out, err := dev("up", "--detach", "--bin-dir", framework.BinDir(), "--training-duration", "20s", "--day", demoDay.String()); err != nil {
		t.Fatalf("dev up --detach: %v\n%s", err, out)
	}
	state, err := devcluster.ReadState(stateDir)
	if err != nil {
		t.Fatalf("Reading the state after dev up: %v", err)
	}
	t.Cleanup(func() {
		if state.Running() {
			_, _ = dev("down")
		}
	})

	if out, err := dev("status"); err != nil || !strings.Contains(out, "ready") || !strings.Contains(out, "Alertmanager: "+state.Alertmanager) {
		t.Errorf("dev status: %v\n%s", err, out)
	}
	if out, err := dev("up", "--detach", "--bin-dir", framework.BinDir()); err == nil || !strings.Contains(out, "already running") {
		t.Errorf("A second dev up: err %v, output:\n%s\nwant a refusal that says a cluster is already running", err, out)
	}

	c := clusterClient(t, state.Kubeconfig)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	paused := watchPausedLoans(ctx, c)
	checkNodes(t, c)
	waitJobsSucceed(t, c, "tfjob-mnist-single", "tfjob-distributed", "resnet50-ps")
	checkProgressReported(t, c, "tfjob-mnist-single", "tfjob-distributed", "resnet50-ps")

	prom := state.Prometheus
	for what, query := range map[string]string{
		"the manager's reconciles": `sum(controller_runtime_reconcile_total{controller="tfjob-controller"})`,
		"container CPU use":        `sum(rate(container_cpu_usage_seconds_total{container!=""}[1m]))`,
		"the GPU simulator's GPUs": `count(DCGM_FI_DEV_GPU_UTIL)`,
		// The jobs have ended and their GPUs are free again: look back over
		// the run.
		"a GPU attributed to a TFJob pod": `count(max_over_time(DCGM_FI_DEV_GPU_UTIL{exported_namespace="ml-dev"}[15m]))`,
		"the demo jobs' productive time":  `sum(backfill_tfjob_goodput_seconds{namespace="ml-dev",cause="productive"})`,
		// The latency simulator's histograms keep the online pods' labels.
		"the online service's simulated requests": `sum(rate(http_server_request_duration_seconds_count{namespace="online-business",pod=~"web-.+"}[1m]))`,
	} {
		waitQueryPositive(t, prom, what, query)
	}
	checkTargetsUp(t, prom)
	checkKubectlTop(t, state.Kubeconfig)
	checkCompressedDay(t, prom, started)
	checkMorningFindsGPUsFree(t, c, prom, paused)
	// Towards the peak the manager evicts more than 5 backlog pods within
	// 10 minutes: BackfillReclaimEvictionStorm fires, and stays firing as
	// long as its unscaled window holds them.
	checkAlertDelivered(t, dev, prom, "BackfillReclaimEvictionStorm", 2*time.Minute)
	checkLatencyHold(t, prom, started)
	checkNodeAgentPanels(t, prom)
	t.Logf("Alerts firing at the end of the day: %v", firingAlerts(context.Background(), prom))

	if out, err := dev("down"); err != nil {
		t.Fatalf("dev down: %v\n%s", err, out)
	}
	for _, comp := range state.Components {
		if err := syscall.Kill(comp.PID, 0); err == nil {
			t.Errorf("%s (pid %d) still runs after dev down", comp.Name, comp.PID)
		}
		if conn, err := net.DialTimeout("tcp", comp.Address, time.Second); err == nil {
			_ = conn.Close()
			t.Errorf("%s still listens on %s after dev down", comp.Name, comp.Address)
		}
	}
	if out, err := dev("status"); err == nil {
		t.Errorf("dev status after dev down succeeded:\n%s", out)
	}
}

// checkProgressReported: the simulated training code of each named job
// reported its steps and a checkpoint to the manager's report endpoint,
// over HTTPS with a pod-bound token, and the job's goodput counts the
// time it ran as productive.
func checkProgressReported(t *testing.T, c client.Client, names ...string) {
	t.Helper()
	for _, name := range names {
		job := &kubeflowv1.TFJob{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ml-dev", Name: name}, job); err != nil {
			t.Fatal(err)
		}
		p, g := job.Status.Progress, job.Status.Goodput
		if p == nil || p.Step <= 0 || p.CheckpointStep == nil || *p.CheckpointStep <= 0 {
			t.Errorf("TFJob %s: progress %+v, want steps and a checkpoint reported", name, p)
		}
		if g == nil || g.ProductiveSeconds <= 0 {
			t.Errorf("TFJob %s: goodput %+v, want productive time", name, g)
		}
	}
}

// checkKubectlTop: the metrics API answers `kubectl top nodes` with every
// node, as on a cluster with metrics-server.
func checkKubectlTop(t *testing.T, kubeconfig string) {
	t.Helper()
	var out []byte
	err := wait.PollUntilContextTimeout(context.Background(), 2*time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(framework.BinDir(), "kubectl"), "top", "nodes", "--no-headers", "--kubeconfig", kubeconfig)
		var err error
		out, err = cmd.CombinedOutput()
		return err == nil && strings.Count(strings.TrimSpace(string(out)), "\n")+1 == 5 && !strings.Contains(string(out), "unknown"), nil
	})
	if err != nil {
		t.Errorf("kubectl top nodes: %v\n%s", err, out)
	}
}

func clusterClient(t *testing.T, kubeconfig string) client.WithWatch {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: framework.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkNodes: three CPU nodes and two GPU nodes of eight GPUs, Ready.
func checkNodes(t *testing.T, c client.Client) {
	t.Helper()
	var nodes corev1.NodeList
	if err := c.List(context.Background(), &nodes); err != nil {
		t.Fatal(err)
	}
	gpuNodes := 0
	for _, n := range nodes.Items {
		ready := false
		for _, cond := range n.Status.Conditions {
			ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
		}
		if !ready {
			t.Errorf("Node %s is not Ready", n.Name)
		}
		if gpus := n.Status.Allocatable["nvidia.com/gpu"]; gpus.Cmp(resource.MustParse("8")) == 0 {
			gpuNodes++
		}
	}
	if len(nodes.Items) != 5 || gpuNodes != 2 {
		t.Errorf("Nodes: %d with %d GPU nodes, want 5 with 2", len(nodes.Items), gpuNodes)
	}
}

// waitJobsSucceed waits until every named TFJob of ml-dev has Succeeded.
func waitJobsSucceed(t *testing.T, c client.Client, names ...string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var states []string
		done := true
		for _, name := range names {
			job := &kubeflowv1.TFJob{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ml-dev", Name: name}, job); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			state := "none"
			if cs := job.Status.Conditions; len(cs) > 0 {
				state = string(cs[len(cs)-1].Type)
			}
			states = append(states, name+"="+state)
			done = done && state == string(kubeflowv1.JobSucceeded)
		}
		last = strings.Join(states, " ")
		return done, nil
	})
	if err != nil {
		t.Fatalf("Waiting for the demo TFJobs to succeed: %v (last: %s)", err, last)
	}
}

// waitQueryPositive waits until an instant query returns a value above 0.
func waitQueryPositive(t *testing.T, prom, what, query string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var body struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := getJSON(ctx, prom+"/api/v1/query?query="+url.QueryEscape(query), &body); err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprint(body.Data.Result)
		if len(body.Data.Result) == 0 {
			return false, nil
		}
		v, _ := body.Data.Result[0].Value[1].(string)
		return v != "0", nil
	})
	if err != nil {
		t.Errorf("Prometheus has no data for %s (%s): %v; last answer %s", what, query, err, last)
	}
}

// checkTargetsUp: every scrape target of the local Prometheus is up.
func checkTargetsUp(t *testing.T, prom string) {
	t.Helper()
	var body struct {
		Data struct {
			ActiveTargets []struct {
				ScrapePool string `json:"scrapePool"`
				ScrapeURL  string `json:"scrapeUrl"`
				Health     string `json:"health"`
				LastError  string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := getJSON(ctx, prom+"/api/v1/targets", &body); err != nil {
			return false, nil
		}
		for _, target := range body.Data.ActiveTargets {
			if target.Health != "up" {
				return false, nil
			}
		}
		return len(body.Data.ActiveTargets) > 0, nil
	})
	if err != nil {
		for _, target := range body.Data.ActiveTargets {
			if target.Health != "up" {
				t.Errorf("Target %s %s is %s: %s", target.ScrapePool, target.ScrapeURL, target.Health, target.LastError)
			}
		}
		t.Errorf("Waiting for every scrape target to be up: %v", err)
	}
}

func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// checkLatencyHold: the demo's online service opts in to latency
// protection and the local cluster simulates its latency
// (internal/devcluster/latencysim), which misses the objective at the
// afternoon peak on a CPU node where training still runs. The manager
// then holds that node back and, once the signal has been healthy for a
// while (offline pods evicted, or the peak passed), releases it: both
// are counted, whenever in the day they happened.
func checkLatencyHold(t *testing.T, prom string, started time.Time) {
	t.Helper()
	actions := func(action string) string {
		return fmt.Sprintf(`sum(%s{action=%q})`, metrics.NameReclaimOnlineActed, action)
	}
	untilDayEnds := max(time.Until(started.Add(demoDay+demoDay/6)), time.Minute)
	pollValue(t, prom, "a node held back by its online pods' latency", actions(metrics.OnlineHold), untilDayEnds, func(v float64) bool { return v > 0 })
	pollValue(t, prom, "a held node released once its online pods were healthy", actions(metrics.OnlineRelease), max(time.Until(started.Add(demoDay+demoDay/3)), 2*time.Minute), func(v float64) bool { return v > 0 })
}
