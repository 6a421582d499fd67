//go:build integration

package prometheus

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestStateMetricsOnManager runs the manager against a real apiserver,
// creates nodes, a TFJob and pods in two namespaces, and reads the state
// metrics off the manager's /metrics until they equal what was created.
func TestStateMetricsOnManager(t *testing.T) {
	api, err := framework.StartAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := api.Stop(); err != nil {
			t.Errorf("Stopping the apiserver: %v", err)
		}
	})
	ctx := context.Background()
	c := api.Client
	for _, ns := range []string{"shop", "team-a"} {
		if err := api.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	metricsURL := startManager(t, api)

	createNode(t, c, "gpu-node", "16", "64Gi", "4")
	createNode(t, c, "cpu-node", "8", "32Gi", "")
	job := &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "mnist"},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {Replicas: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "training"}},
			}}},
		}},
	}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	// A pod the job controls, bound by hand (no scheduler runs here).
	trained := pod("team-a", "mnist-by-hand-0", "gpu-node", req("cpu", "2", "memory", "8Gi", "nvidia.com/gpu", "2"), req("cpu", "2", "memory", "8Gi", "nvidia.com/gpu", "2"))
	trained.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: "mnist", UID: job.UID, Controller: ptr.To(true)}}
	trained.Labels = map[string]string{kubeflowv1.ReplicaTypeLabel: "worker"}
	web := pod("shop", "web-0", "gpu-node", req("cpu", "500m", "memory", "1Gi"), req("cpu", "1", "memory", "2Gi"))
	batch := pod("shop", "etl-0", "cpu-node", nil, nil)
	batch.Labels = map[string]string{colocation.TierLabel: "offline"}
	classed := pod("team-a", "report-0", "cpu-node", req("cpu", "1"), nil)
	classed.Spec.PriorityClassName = colocation.DefaultOfflinePriorityClass
	unbound := pod("shop", "web-1", "", req("cpu", "1"), nil)
	done := pod("shop", "cron-0", "cpu-node", req("cpu", "3"), nil)
	for _, p := range []*corev1.Pod{trained, web, batch, classed, unbound, done} {
		if err := c.Create(ctx, p); err != nil {
			t.Fatalf("Creating pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
	done.Status.Phase = corev1.PodSucceeded
	if err := c.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}

	want := map[string]float64{
		`backfill_node_allocatable{node="gpu-node",resource="cpu"}`:                                                               16,
		`backfill_node_allocatable{node="gpu-node",resource="memory"}`:                                                            64 << 30,
		`backfill_node_allocatable{node="gpu-node",resource="nvidia_com_gpu"}`:                                                    4,
		`backfill_node_allocatable{node="cpu-node",resource="nvidia_com_gpu"}`:                                                    0,
		`backfill_node_requests{node="gpu-node",resource="cpu",tier="online"}`:                                                    0.5,
		`backfill_node_requests{node="gpu-node",resource="memory",tier="online"}`:                                                 1 << 30,
		`backfill_node_limits{node="gpu-node",resource="cpu",tier="online"}`:                                                      1,
		`backfill_node_requests{node="gpu-node",resource="cpu",tier="offline"}`:                                                   2,
		`backfill_node_requests{node="gpu-node",resource="nvidia_com_gpu",tier="offline"}`:                                        2,
		`backfill_node_requests{node="gpu-node",resource="nvidia_com_gpu",tier="online"}`:                                         0,
		`backfill_node_requests{node="cpu-node",resource="cpu",tier="offline"}`:                                                   1,
		`backfill_node_requests{node="cpu-node",resource="cpu",tier="online"}`:                                                    0, // the succeeded pod is gone
		`backfill_node_pods{node="gpu-node",qos_class="Burstable",tier="online"}`:                                                 1,
		`backfill_node_pods{node="gpu-node",qos_class="Guaranteed",tier="offline"}`:                                               1,
		`backfill_node_pods{node="cpu-node",qos_class="BestEffort",tier="offline"}`:                                               1,
		`backfill_node_pods{node="cpu-node",qos_class="Burstable",tier="offline"}`:                                                1,
		`backfill_node_pods{node="cpu-node",qos_class="Burstable",tier="online"}`:                                                 0,
		`backfill_offline_pod_info{namespace="team-a",node="gpu-node",pod="mnist-by-hand-0",replica_type="worker",tfjob="mnist"}`: 1,
		`backfill_offline_pod_info{namespace="shop",node="cpu-node",pod="etl-0",replica_type="",tfjob=""}`:                        1,
		`backfill_offline_pod_info{namespace="team-a",node="cpu-node",pod="report-0",replica_type="",tfjob=""}`:                   1,
		`backfill_tfjob_replicas{namespace="team-a",replica_type="worker",state="desired",tfjob="mnist"}`:                         2,
		`backfill_tfjob_created_timestamp_seconds{namespace="team-a",tfjob="mnist"}`:                                              float64(job.CreationTimestamp.Unix()),
		`backfill_tfjob_restarts{namespace="team-a",tfjob="mnist"}`:                                                               0,
	}
	got := waitForMetrics(t, metricsURL, want)
	if n := count(got, "backfill_offline_pod_info"); n != 3 {
		t.Errorf("backfill_offline_pod_info has %d series, want 3 (the unbound and succeeded pods, and the job's own unbound pods, have none)", n)
	}

	// The view follows changes: a pod that finishes and one deleted leave
	// the sums.
	classed.Status.Phase = corev1.PodSucceeded
	if err := c.Status().Update(ctx, classed); err != nil {
		t.Fatal(err)
	}
	// At once: with no kubelet here, a graceful deletion would keep the pod
	// (terminating pods still hold their node's resources, for the metrics
	// as for the scheduler).
	if err := c.Delete(ctx, web, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	delete(want, `backfill_offline_pod_info{namespace="team-a",node="cpu-node",pod="report-0",replica_type="",tfjob=""}`)
	want[`backfill_node_requests{node="cpu-node",resource="cpu",tier="offline"}`] = 0
	want[`backfill_node_pods{node="cpu-node",qos_class="Burstable",tier="offline"}`] = 0
	want[`backfill_node_requests{node="gpu-node",resource="cpu",tier="online"}`] = 0
	want[`backfill_node_requests{node="gpu-node",resource="memory",tier="online"}`] = 0
	want[`backfill_node_limits{node="gpu-node",resource="cpu",tier="online"}`] = 0
	want[`backfill_node_pods{node="gpu-node",qos_class="Burstable",tier="online"}`] = 0
	got = waitForMetrics(t, metricsURL, want)
	if _, ok := got[`backfill_offline_pod_info{namespace="team-a",node="cpu-node",pod="report-0",replica_type="",tfjob=""}`]; ok {
		t.Error("The succeeded pod report-0 still has a backfill_offline_pod_info series")
	}

	// Exactly two offline pods now, and the job's info under one phase.
	if n := count(got, "backfill_offline_pod_info"); n != 2 {
		t.Errorf("backfill_offline_pod_info has %d series, want 2", n)
	}
	if n := count(got, "backfill_tfjob_info"); n != 1 {
		t.Errorf("backfill_tfjob_info has %d series, want 1", n)
	}
}

// waitForMetrics scrapes url until its series named in want have want's
// values, and returns the last scrape.
func waitForMetrics(t *testing.T, url string, want map[string]float64) map[string]float64 {
	t.Helper()
	var got map[string]float64
	var scrapeErr error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		scraped, err := scrapeManager(ctx, url)
		if scrapeErr = err; err != nil {
			return false, nil // the manager may not serve yet
		}
		got = scraped
		return cmp.Diff(want, pick(got, want)) == "", nil
	})
	if err != nil {
		t.Fatalf("State metrics never matched (last scrape error: %v) (-want +got):\n%s", scrapeErr, cmp.Diff(want, pick(got, want)))
	}
	return got
}

// startManager runs the manager in-process on a free metrics port until
// the test ends, and returns its /metrics URL.
func startManager(t *testing.T, api *framework.APIServer) string {
	t.Helper()
	ctrllog.SetLogger(logr.Discard()) // the manager's logs are not under test
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	opts := manager.DefaultOptions()
	opts.MetricsAddress, opts.HealthAddress = fmt.Sprintf("127.0.0.1:%d", port), "0"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- manager.RunWithConfig(ctx, api.Env.Config, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Manager: %v", err)
		}
	})
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
}

func req(pairs ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		list[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return list
}

func pod(ns, name, node string, requests, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "main", Image: "app", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
		}}},
	}
}

func createNode(t *testing.T, c client.Client, name, cpu, memory, gpus string) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	node.Status.Allocatable = req("cpu", cpu, "memory", memory)
	if gpus != "" {
		node.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse(gpus)
	}
	node.Status.Capacity = node.Status.Allocatable
	if err := c.Status().Update(context.Background(), node); err != nil {
		t.Fatal(err)
	}
}

// scrapeManager reads /metrics as "name{label="value",...}" → value.
func scrapeManager(ctx context.Context, url string) (map[string]float64, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	got := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var pairs []string
			for _, l := range m.GetLabel() {
				pairs = append(pairs, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(pairs)
			key := name + "{" + strings.Join(pairs, ",") + "}"
			if m.GetGauge() != nil {
				got[key] = m.GetGauge().GetValue()
			}
		}
	}
	return got, nil
}

// pick keeps the series of got that want names.
func pick(got, want map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k := range want {
		if v, ok := got[k]; ok {
			out[k] = v
		}
	}
	return out
}

func count(got map[string]float64, name string) int {
	n := 0
	for k := range got {
		if len(k) > len(name) && k[:len(name)+1] == name+"{" {
			n++
		}
	}
	return n
}
