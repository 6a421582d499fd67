package devcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// Summary is one frame of the live view of `dev up`: what runs where, and
// how much of the cluster online and offline work request and use.
func (c *Cluster) Summary(ctx context.Context) (string, error) {
	var nodes corev1.NodeList
	if err := c.client.List(ctx, &nodes); err != nil {
		return "", err
	}
	var pods corev1.PodList
	if err := c.client.List(ctx, &pods); err != nil {
		return "", err
	}
	var jobs kubeflowv1.TFJobList
	if err := c.client.List(ctx, &jobs); err != nil {
		return "", err
	}

	var b strings.Builder
	ready, gpus := 0, int64(0)
	cpuTotal := resource.Quantity{}
	var published colocation.Resources
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if nodeReady(n) {
			ready++
		}
		cpuTotal.Add(n.Status.Allocatable[corev1.ResourceCPU])
		q := n.Status.Allocatable[gpuResource]
		gpus += q.Value()
		published = published.Add(colocation.BatchOf(n.Status.Allocatable))
	}
	req := map[string]*tierUse{"online": {}, "offline": {}}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		req[tierOf(p)].add(p)
	}
	used := c.usedCPUByTier(ctx, pods.Items)

	now := time.Now()
	fmt.Fprintf(&b, "%s  nodes %d/%d Ready, %s CPU, %d GPUs\n", now.Format("15:04:05"), ready, len(nodes.Items), cpuTotal.String(), gpus)
	if c.day.dayLength > 0 {
		fmt.Fprintf(&b, "  online service's day: %s\n", c.day.at(now))
	}
	for _, tier := range []string{"online", "offline"} {
		u := req[tier]
		fmt.Fprintf(&b, "  %-8s %3d pods  requests %5.1f CPU + %5.1f reclaimed CPU  %3d GPUs  uses %s CPU\n", tier, u.pods, u.cpu, u.batchCPU, u.gpus, used[tier])
	}
	fmt.Fprintf(&b, "  reclaimed capacity: %.1f CPU offered on the nodes, %.1f held by offline pods\n",
		float64(published.MilliCPU)/1000, req["offline"].batchCPU)
	fmt.Fprintf(&b, "  TFJobs   %s\n", phases(jobs.Items))
	fmt.Fprintf(&b, "  Prometheus %s   Alertmanager %s   export KUBECONFIG=%s\n", c.state.Prometheus, c.state.Alertmanager, c.state.Kubeconfig)
	return b.String(), nil
}

const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// tierUse sums what the pods of a tier request.
type tierUse struct {
	pods          int
	cpu, batchCPU float64
	gpus          int64
}

func (t *tierUse) add(p *corev1.Pod) {
	t.pods++
	for _, c := range p.Spec.Containers {
		t.cpu += c.Resources.Requests.Cpu().AsApproximateFloat64()
		t.batchCPU += float64(colocation.BatchOf(c.Resources.Requests).MilliCPU) / 1000
		q := c.Resources.Requests[gpuResource]
		t.gpus += q.Value()
	}
}

// tierOf is the manager's own tier of a pod: offline if a TFJob controls
// it, it has the offline PriorityClass or the offline label.
func tierOf(p *corev1.Pod) string {
	return string(colocation.PodTier(p, colocation.DefaultOfflinePriorityClass))
}

// phases counts jobs by their state, the last condition.
func phases(jobs []kubeflowv1.TFJob) string {
	count := map[string]int{}
	for _, j := range jobs {
		state := "Pending"
		if c := j.Status.Conditions; len(c) > 0 {
			state = string(c[len(c)-1].Type)
		}
		count[state]++
	}
	var parts []string
	for state, n := range count {
		parts = append(parts, fmt.Sprintf("%s %d", state, n))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// usedCPUByTier asks Prometheus for the CPU each pod uses, from the
// kubelet-style container metrics, and sums it by the pod's tier; "-"
// until Prometheus has data.
func (c *Cluster) usedCPUByTier(ctx context.Context, pods []corev1.Pod) map[string]string {
	out := map[string]string{"online": "-", "offline": "-"}
	samples, ok := queryVector(ctx, c.state.Prometheus, `sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{container!=""}[1m]))`)
	if !ok {
		return out
	}
	tiers := map[string]string{}
	for i := range pods {
		tiers[pods[i].Namespace+"/"+pods[i].Name] = tierOf(&pods[i])
	}
	sum := map[string]float64{}
	for _, s := range samples {
		if tier, ok := tiers[s.labels["namespace"]+"/"+s.labels["pod"]]; ok {
			sum[tier] += s.value
		}
	}
	for tier, v := range sum {
		out[tier] = strconv.FormatFloat(v, 'f', 1, 64)
	}
	return out
}

// sample is one series of an instant query's result.
type sample struct {
	labels map[string]string
	value  float64
}

// queryVector runs an instant query against Prometheus's HTTP API.
func queryVector(ctx context.Context, prometheus, query string) ([]sample, bool) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, prometheus+"/api/v1/query?query="+url.QueryEscape(query), nil)
	if err != nil {
		return nil, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, false
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, false
	}
	var out []sample
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			continue
		}
		out = append(out, sample{labels: r.Metric, value: v})
	}
	return out, len(out) > 0
}
