//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/devcluster/gpusim"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/observability/dashboards"
	"github.com/backfill-dev/backfill/internal/observability/expr"
	"github.com/backfill-dev/backfill/test/framework"
)

// The observability suite: the checked-in dashboards' queries, run on the
// local cluster's Prometheus, return data and agree with what the API
// says, and `backfill top` prints the same numbers.

const (
	obsTrainingNS = "obs-train"
	obsOnlineNS   = "obs-online"
	obsJob        = "gpu-train"
	// obsRateInterval stands for $__rate_interval: twelve scrapes at the
	// local cluster's 5s.
	obsRateInterval = "1m"
	// obsRange stands for $__range: the five minutes range queries are
	// run over.
	obsRange = "5m"
)

// obsCluster is one CPU node and one GPU node, small enough for a quick
// start, big enough for every panel to have a row of each kind.
var obsCluster = []string{"--cpu-nodes=1", "--gpu-nodes=1", "--gpus-per-node=6", "--node-cpu=8", "--node-memory=32Gi"}

// obsInferGPUUtil is the simulated utilisation of the online inference
// pod's GPU: idle, for the idle online GPUs row.
const obsInferGPUUtil = "3"

func TestObservabilityDashboards(t *testing.T) {
	dc := startCluster(t, obsCluster...)
	c := dc.client
	createNamespace(t, c, obsTrainingNS)
	createNamespace(t, c, obsOnlineNS)
	createObsWorkload(t, c)
	waitFor(t, time.Minute, "both GPU Workers running", podsRunning(c, obsTrainingNS, obsJob, 2))
	waitFor(t, time.Minute, "the online pods running", onlinePodsRunning(c, 5))

	prom := prometheusAPI(t, dc.state.Prometheus)
	values := map[string]string{
		dashboards.VarNamespace: obsTrainingNS,
		dashboards.VarTFJob:     obsJob,
		dashboards.VarNode:      dashboards.AllValue,
		"__rate_interval":       obsRateInterval,
		// The GPU loans' table counts over the dashboard's range.
		"__range": obsRange,
	}
	for _, file := range []string{"backfill-cockpit.json", "backfill-tfjob.json"} {
		data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), dashboards.ProvisionedDir, file))
		if err != nil {
			t.Fatal(err)
		}
		checkVariablesOffer(t, prom, file, data, values)
		checkPanelsHaveData(t, prom, file, data, values)
	}

	checkIdleOnlineGPUs(t, prom)

	want := waitFiguresAgree(t, c, prom)
	checkTop(t, prom, dc.state.Prometheus, want)
}

// checkIdleOnlineGPUs wants the idle online GPUs table to hold the
// inference Deployment's one GPU, named by its owner, and nothing of the
// training pods' GPUs or of the free ones, whose pod label is gpusim's.
func checkIdleOnlineGPUs(t *testing.T, prom promv1.API) {
	t.Helper()
	want := map[string]string{
		"GPUs held":                    fmt.Sprint(map[string]float64{obsOnlineNS + "/infer": 1}),
		"GPUs idle (6h average < 10%)": fmt.Sprint(map[string]float64{obsOnlineNS + "/infer": 1}),
		"GPU utilisation (6h average)": fmt.Sprint(map[string]float64{obsOnlineNS + "/infer": 3}),
	}
	for _, col := range dashboards.OnlineGPUIdleColumns() {
		w, ok := want[col.Name]
		if !ok {
			continue
		}
		var got string
		waitFor(t, time.Minute, "the idle online GPUs column "+col.Name, func(ctx context.Context) (bool, string, error) {
			v, _, _, err := prom.Query(ctx, col.Expr, time.Now())
			if err != nil {
				return false, col.Expr, err
			}
			cells := map[string]float64{}
			for _, s := range v.(model.Vector) {
				cells[string(s.Metric["workload"])] = float64(s.Value)
			}
			got = fmt.Sprint(cells)
			return got == w, fmt.Sprintf("%s, want %s", got, w), nil
		})
	}
}

// createObsWorkload is a TFJob of two Workers with 2 GPUs each, online
// pods of every QoS class, each with a simulated CPU and memory use, and
// an online inference pod holding a GPU at obsInferGPUUtil.
func createObsWorkload(t *testing.T, c client.Client) {
	t.Helper()
	job := makeTFJob(obsTrainingNS, obsJob).Workers(2).CPU("2").GPUs(2).SimDuration("10m").Obj()
	annotations := job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Annotations
	annotations[kwok.UsageCPUAnnotation] = "1500m"
	annotations[kwok.UsageMemoryAnnotation] = "2Gi"
	createTFJob(t, c, job)

	create(t, c, makeOnline(obsOnlineNS, "web", 2, "1")) // Burstable
	guaranteed := onlinePod("cache", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")})
	guaranteed.Spec.Containers[0].Resources.Limits = guaranteed.Spec.Containers[0].Resources.Requests
	create(t, c, guaranteed)
	create(t, c, onlinePod("batch-probe", nil)) // BestEffort
	// Online inference holding a GPU it leaves idle.
	infer := makeOnline(obsOnlineNS, "infer", 1, "500m")
	infer.Spec.Template.Annotations[gpusim.UtilAnnotation] = obsInferGPUUtil
	gpu := corev1.ResourceList{gpusim.ResourceGPU: resource.MustParse("1")}
	infer.Spec.Template.Spec.Containers[0].Resources.Requests[gpusim.ResourceGPU] = gpu[gpusim.ResourceGPU]
	infer.Spec.Template.Spec.Containers[0].Resources.Limits = gpu
	create(t, c, infer)
}

func onlinePod(name string, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: obsOnlineNS, Name: name, Labels: map[string]string{"app": name},
			Annotations: map[string]string{kwok.UsageCPUAnnotation: "250m", kwok.UsageMemoryAnnotation: "256Mi"},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: name, Image: "registry.example.com/shop/" + name + ":1.0",
			Resources: corev1.ResourceRequirements{Requests: requests},
		}}},
	}
}

// onlinePodsRunning waits for n Running pods in the online namespace.
func onlinePodsRunning(c client.Client, n int) check {
	return func(ctx context.Context) (bool, string, error) {
		pods, err := listPods(ctx, c, obsOnlineNS, nil)
		if err != nil {
			return false, err.Error(), nil
		}
		return countRunning(pods) == n, describePods(pods), nil
	}
}

func prometheusAPI(t *testing.T, address string) promv1.API {
	t.Helper()
	pc, err := api.NewClient(api.Config{Address: address})
	if err != nil {
		t.Fatal(err)
	}
	return promv1.NewAPI(pc)
}

// checkVariablesOffer wants each query variable to offer the running
// job's value, or some value where the test picks All: label_values(selector,
// label) is the label's values among the series the selector finds.
func checkVariablesOffer(t *testing.T, prom promv1.API, file string, data []byte, values map[string]string) {
	t.Helper()
	vars, err := dashboards.VariableQueriesOf(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vars {
		if evaluatedElsewhere(v.Selector) {
			continue
		}
		selector := dashboards.Substitute(v.Selector, values)
		waitFor(t, time.Minute, fmt.Sprintf("%s variable %s to offer %s", file, v.Name, values[v.Name]), func(ctx context.Context) (bool, string, error) {
			got, _, _, err := prom.LabelValues(ctx, v.Label, []string{selector}, time.Now().Add(-5*time.Minute), time.Now())
			if err != nil {
				return false, err.Error(), nil
			}
			for _, value := range got {
				// All (the node variable's) is offered once any value is.
				if string(value) == values[v.Name] || values[v.Name] == dashboards.AllValue {
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("label_values(%s, %s) = %v", selector, v.Label, got), nil
		})
	}
}

// evaluatedElsewhere: the query reads series this cluster has none of,
// and its panels are evaluated on recorded series in
// internal/observability/dashboards and in TestDevCluster, whose demo day
// makes them: the node agent's offline ceiling (this suite's online pods
// use too little of their nodes for the agent to set one) and the online
// latency's (this suite's online pods declare no objective); and the GPU
// loans' next return, which exists only while a loan must end within a
// forecast (this suite's inference Deployment states no schedule),
// evaluated in internal/observability/expr and test/integration/prometheus.
// The other GPU loan panels have data here: the GPU node makes a pool.
func evaluatedElsewhere(query string) bool {
	return strings.Contains(query, expr.MetricNodeAgentCeiling) || strings.Contains(query, "backfill_online_latency_") ||
		strings.Contains(query, expr.MetricGPULoanNextReturn)
}

// checkPanelsHaveData runs every query of every panel, with the variables
// substituted, as Grafana would (instant or over the last minutes), until
// each returns at least one series.
func checkPanelsHaveData(t *testing.T, prom promv1.API, file string, data []byte, values map[string]string) {
	t.Helper()
	queries, err := dashboards.QueriesOf(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) == 0 {
		t.Fatalf("%s has no queries", file)
	}
	for _, q := range queries {
		if evaluatedElsewhere(q.Expr) {
			continue
		}
		timeout := 90 * time.Second
		if strings.Contains(q.Expr, ":"+expr.GPUIdleStep+"]") {
			// A subquery's steps fall on multiples of its step: a cluster
			// minutes old has a step with data once one such multiple
			// passed after the first scrape.
			timeout += 5 * time.Minute
		}
		query := dashboards.Substitute(q.Expr, values)
		what := fmt.Sprintf("%s panel %d %q query %s to return data", file, q.PanelID, q.PanelTitle, q.RefID)
		waitFor(t, timeout, what, func(ctx context.Context) (bool, string, error) {
			n, err := seriesCount(ctx, prom, query, q.Instant)
			if err != nil {
				// A query Prometheus refuses will not improve with time.
				return false, query, err
			}
			return n > 0, fmt.Sprintf("%d series from %s", n, query), nil
		})
	}
}

// seriesCount runs a query instant or over the last five minutes and
// counts the series it returns.
func seriesCount(ctx context.Context, prom promv1.API, expr string, instant bool) (int, error) {
	now := time.Now()
	if instant {
		v, _, _, err := prom.Query(ctx, expr, now)
		if err != nil {
			return 0, err
		}
		return len(v.(model.Vector)), nil
	}
	v, _, _, err := prom.QueryRange(ctx, expr, promv1.Range{Start: now.Add(-5 * time.Minute), End: now, Step: 15 * time.Second})
	if err != nil {
		return 0, err
	}
	return len(v.(model.Matrix)), nil
}
