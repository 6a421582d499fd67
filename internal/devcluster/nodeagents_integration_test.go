//go:build integration

package devcluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/cgroupsim"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

// The step that runs the node agents, on a real apiserver: the agent of a
// simulated node lists its pods from the apiserver, caps the training
// there below what three busy web pods leave, and serves what Prometheus
// scrapes at its node's path; a deleted pod's cgroup and wait go with it,
// and the agents stop, lifting their ceilings, with their server.
func TestNodeAgentsOnSimulatedCgroups(t *testing.T) {
	ctx := context.Background()
	api, err := framework.StartAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Stop() })
	const ns, node = "colocated", "cpu-0"
	if err := api.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	var web []*corev1.Pod
	for i := range 3 {
		web = append(web, runningPod(t, api, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("web-%d", i), Annotations: map[string]string{kwok.UsageCPUAnnotation: "3500m"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "web", Image: "web", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			}}}},
		}))
	}
	batch := corev1.ResourceList{colocation.ResourceBatchCPU: resource.MustParse("14000")}
	train := runningPod(t, api, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "train", Labels: map[string]string{colocation.TierLabel: string(colocation.TierOffline)},
			Annotations: map[string]string{kwok.UsageCPUAnnotation: "14"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "tensorflow", Image: "train",
			Resources: corev1.ResourceRequirements{Requests: batch, Limits: batch}}}},
	})

	opts := DefaultOptions()
	opts.StateDir, opts.CPUNodes, opts.GPUNodes = t.TempDir(), 1, 0
	c := &Cluster{opts: opts, config: api.Env.Config, state: &State{}, commands: map[string][]string{}}
	if err := c.startNodeAgents(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := false
	shutdown := func() {
		for _, srv := range c.servers {
			_ = srv.Shutdown(ctx)
		}
		stopped = true
	}
	t.Cleanup(func() {
		if !stopped {
			shutdown()
		}
	})
	url := "http://" + c.componentAddress(componentNodeAgents) + cgroupsim.MetricsPath(node)
	// 85% of 16 cores less what the web pods and the node's daemons use.
	const wantCeiling = 0.85*16 - 3*3.5 - 0.05
	framework.Eventually(t, "the agent of "+node+" to cap the training at about 3 cores", func(ctx context.Context) (bool, error) {
		m, err := scrape(ctx, url)
		if err != nil {
			return false, err
		}
		ceiling := m["backfill_node_agent_offline_cpu_ceiling_cores"]
		return ceiling > wantCeiling-0.25 && ceiling < wantCeiling+0.25 &&
			m["backfill_node_agent_offline_cpu_throttled_seconds_total"] > 0 &&
			m[`backfill_node_agent_cpu_used_cores{tier="online"}`] > 10 &&
			m[`backfill_node_agent_online_cpu_wait_seconds_total{namespace="colocated",pod="web-0"}`] > 0, nil
	})
	if resp, err := http.Get("http://" + c.componentAddress(componentNodeAgents) + cgroupsim.MetricsPath("no-such-node")); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("The metrics of a node that is not simulated: %v, %v; want 404", resp, err)
	}

	tree := filepath.Join(opts.StateDir, nodeAgentsDir, node, "cgroup", "kubepods.slice")
	trainDir := filepath.Join(tree, "kubepods-besteffort.slice", "kubepods-besteffort-pod"+strings.ReplaceAll(string(train.UID), "-", "_")+".slice")
	cpuMax := func() string {
		b, _ := os.ReadFile(filepath.Join(trainDir, "cpu.max"))
		return strings.TrimSpace(string(b))
	}
	if got := cpuMax(); got == "" || strings.HasPrefix(got, "max") {
		t.Errorf("The training's cpu.max under the ceiling: %q, want a quota", got)
	}

	gone := web[2]
	if err := api.Client.Delete(ctx, gone, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	goneDir := filepath.Join(tree, "kubepods-burstable.slice", "kubepods-burstable-pod"+strings.ReplaceAll(string(gone.UID), "-", "_")+".slice")
	framework.Eventually(t, "the cgroup and the wait of the deleted pod "+gone.Name+" to go", func(ctx context.Context) (bool, error) {
		m, err := scrape(ctx, url)
		if err != nil {
			return false, err
		}
		_, waits := m[`backfill_node_agent_online_cpu_wait_seconds_total{namespace="colocated",pod="web-2"}`]
		_, err = os.Stat(goneDir)
		return !waits && os.IsNotExist(err), nil
	})

	shutdown()
	framework.Eventually(t, "the agent to lift the training's ceiling as it stops", func(context.Context) (bool, error) {
		return cpuMax() == "max 100000", nil
	})
}

// runningPod creates pod and marks it running, as kwok would.
func runningPod(t *testing.T, api *framework.APIServer, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	if err := api.Client.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	api.SetPodStatus(t, pod, func(s *corev1.PodStatus) { s.Phase = corev1.PodRunning })
	return pod
}

// scrape is a metrics endpoint's samples by name and labels, e.g.
// `m{tier="online"}`.
func scrape(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string // sorted by name, as the agent exports them
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			out[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return out, nil
}
