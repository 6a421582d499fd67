//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/cli"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/observability/dashboards"
)

// figures are the cockpit's numbers the suite checks: GPUs free, CPU used
// by each tier, and per node the CPU each tier requests and its pods.
type figures struct {
	gpusFree                int64
	usedOnline, usedOffline float64
	nodes                   map[string]nodeFigures
}

type nodeFigures struct {
	cpuOnline, cpuOffline   float64
	podsOnline, podsOffline int
}

// clusterState is what the API says: the figures (CPU used from the pods'
// kwok usage annotations) and each running pod's tier by namespace/pod.
type clusterState struct {
	figures
	tiers map[string]colocation.Tier
}

// annotatedTolerance is how far the rate of kwok's emulated CPU counters
// may stray from the use the pods' annotations ask for, once the pods ran
// longer than the rate window: before that, rate() divides what a young
// series grew by the whole window and shows less.
const annotatedTolerance = 0.1

// stateFromAPI counts from Nodes and Pods: a pod takes its requests off
// its node until it terminates.
func stateFromAPI(ctx context.Context, c client.Client) (clusterState, error) {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return clusterState{}, err
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return clusterState{}, err
	}
	s := clusterState{figures: figures{nodes: map[string]nodeFigures{}}, tiers: map[string]colocation.Tier{}}
	for _, n := range nodes.Items {
		q := n.Status.Allocatable[kwok.GPUResource]
		s.gpusFree += q.Value()
		s.nodes[n.Name] = nodeFigures{}
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		nf := s.nodes[p.Spec.NodeName]
		cpu, used := 0.0, 0.0
		for _, ctr := range p.Spec.Containers {
			cpu += ctr.Resources.Requests.Cpu().AsApproximateFloat64()
			gpu := ctr.Resources.Requests[kwok.GPUResource]
			s.gpusFree -= gpu.Value()
			if q, err := resource.ParseQuantity(p.Annotations[kwok.UsageCPUAnnotation]); err == nil {
				used += q.AsApproximateFloat64()
			}
		}
		tier := colocation.PodTier(p, offlineClass)
		s.tiers[p.Namespace+"/"+p.Name] = tier
		if tier == colocation.TierOffline {
			nf.cpuOffline, nf.podsOffline, s.usedOffline = nf.cpuOffline+cpu, nf.podsOffline+1, s.usedOffline+used
		} else {
			nf.cpuOnline, nf.podsOnline, s.usedOnline = nf.cpuOnline+cpu, nf.podsOnline+1, s.usedOnline+used
		}
		s.nodes[p.Spec.NodeName] = nf
	}
	return s, nil
}

// dashboardQuery runs one of the dashboards' queries for the whole
// cluster at a given instant.
func dashboardQuery(ctx context.Context, prom promv1.API, expr string, at time.Time) (model.Vector, error) {
	values := map[string]string{dashboards.VarNamespace: dashboards.AllValue, dashboards.VarTFJob: dashboards.AllValue, "__rate_interval": obsRateInterval}
	v, _, _, err := prom.Query(ctx, dashboards.Substitute(expr, values), at)
	if err != nil {
		return nil, err
	}
	return v.(model.Vector), nil
}

// figuresFromPrometheus reads the figures through the dashboards' queries
// at an instant: the stat panels and the watermark table's columns.
func figuresFromPrometheus(ctx context.Context, prom promv1.API, at time.Time) (figures, error) {
	f := figures{nodes: map[string]nodeFigures{}}
	for _, fig := range dashboards.CockpitFigures() {
		v, err := dashboardQuery(ctx, prom, fig.Query.Expr, at)
		if err != nil {
			return f, fmt.Errorf("%s: %w", fig.Title, err)
		}
		if len(v) != 1 {
			return f, fmt.Errorf("%s: %d series, want 1: %v", fig.Title, len(v), v)
		}
		switch fig.Title {
		case "GPUs free":
			f.gpusFree = int64(v[0].Value)
		case "Online CPU used":
			f.usedOnline = float64(v[0].Value)
		case "Offline CPU used":
			f.usedOffline = float64(v[0].Value)
		}
	}
	for _, col := range dashboards.WatermarkColumns() {
		v, err := dashboardQuery(ctx, prom, col.Expr, at)
		if err != nil {
			return f, fmt.Errorf("%s: %w", col.Name, err)
		}
		for _, s := range v {
			node := string(s.Metric["node"])
			nf := f.nodes[node]
			switch col.Name {
			case "CPU req online":
				nf.cpuOnline = float64(s.Value)
			case "CPU req offline":
				nf.cpuOffline = float64(s.Value)
			case "Pods online":
				nf.podsOnline = int(s.Value)
			case "Pods offline":
				nf.podsOffline = int(s.Value)
			}
			f.nodes[node] = nf
		}
	}
	return f, nil
}

// usedByAPITier is the CPU each tier uses at an instant, by a plain
// per-pod rate split with the API's tiers: what the stats must equal
// whatever kwok's counters say.
func usedByAPITier(ctx context.Context, prom promv1.API, at time.Time, tiers map[string]colocation.Tier) (online, offline float64, err error) {
	q := fmt.Sprintf(`sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{container!=""}[%s]))`, obsRateInterval)
	v, _, _, err := prom.Query(ctx, q, at)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range v.(model.Vector) {
		switch tiers[string(s.Metric["namespace"])+"/"+string(s.Metric["pod"])] {
		case colocation.TierOffline:
			offline += float64(s.Value)
		case colocation.TierOnline:
			online += float64(s.Value)
		}
	}
	return online, offline, nil
}

// waitFiguresAgree waits until the dashboards' numbers equal the API's:
// GPUs free and per-node requests and pods exactly, CPU used per tier
// exactly as a per-pod split by the API's tiers at the same instant, and
// near the pods' annotated use. It returns the API's figures.
func waitFiguresAgree(t *testing.T, c client.Client, prom promv1.API) figures {
	t.Helper()
	var want clusterState
	waitFor(t, 3*time.Minute, "the cockpit's GPUs free, CPU used and per-node requests to match the API", func(ctx context.Context) (bool, string, error) {
		var err error
		if want, err = stateFromAPI(ctx, c); err != nil {
			return false, err.Error(), nil
		}
		at := time.Now()
		got, err := figuresFromPrometheus(ctx, prom, at)
		if err != nil {
			return false, err.Error(), nil
		}
		online, offline, err := usedByAPITier(ctx, prom, at, want.tiers)
		if err != nil {
			return false, err.Error(), nil
		}
		seen := fmt.Sprintf("API %+v; Prometheus %+v; per-pod split online %.3f offline %.3f", want.figures, got, online, offline)
		exact := got.gpusFree == want.gpusFree && fmt.Sprint(got.nodes) == fmt.Sprint(want.nodes) &&
			near(got.usedOnline, online, 1e-9) && near(got.usedOffline, offline, 1e-9)
		annotated := near(got.usedOnline, want.usedOnline, annotatedTolerance) && near(got.usedOffline, want.usedOffline, annotatedTolerance)
		return exact && annotated, seen, nil
	})
	if want.gpusFree != 6-2*2-1 {
		t.Errorf("API: %d GPUs free, want 1 of 6 with two Workers of 2 and an online pod of 1", want.gpusFree)
	}
	return want.figures
}

// near reports whether got is within a relative tolerance of want.
func near(got, want, tolerance float64) bool {
	return math.Abs(got-want) <= tolerance*math.Abs(want)+1e-12
}

// checkTop runs `backfill top --once` and wants the API's numbers in it,
// and CPU used as the dashboard's stats show it just before and after.
func checkTop(t *testing.T, prom promv1.API, prometheusURL string, want figures) {
	t.Helper()
	before, err := figuresFromPrometheus(context.Background(), prom, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(backfill, "top", "--once", "--prometheus-url", prometheusURL, "--rate-interval", obsRateInterval).CombinedOutput()
	if err != nil {
		t.Fatalf("backfill top --once: %v\n%s", err, out)
	}
	after, err := figuresFromPrometheus(context.Background(), prom, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backfill top --once:\n%s", out)
	lines := strings.Split(string(out), "\n")
	if m := regexp.MustCompile(`GPUs free: (\d+)`).FindStringSubmatch(lines[1]); m == nil || m[1] != strconv.FormatInt(want.gpusFree, 10) {
		t.Errorf("top shows GPUs free %v, the API %d", m, want.gpusFree)
	}
	checkTopUsed(t, lines[1], "Online CPU used", before.usedOnline, after.usedOnline)
	checkTopUsed(t, lines[1], "Offline CPU used", before.usedOffline, after.usedOffline)
	if !regexp.MustCompile(`GPU utilisation of training pods: \d+%`).MatchString(lines[1]) {
		t.Errorf("top shows no GPU utilisation: %s", lines[1])
	}
	// The glance fits 120 columns and has a row per node; -o wide has
	// every column, the API's numbers among them.
	for _, line := range lines {
		if n := utf8.RuneCountInString(line); n > 120 {
			t.Errorf("top's line of %d columns, want at most 120 without -o wide: %q", n, line)
		}
	}
	for node := range want.nodes {
		if !regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(node) + `\s`).Match(out) {
			t.Errorf("top has no row for node %s without -o wide", node)
		}
	}
	wide, err := exec.Command(backfill, "top", "--once", "-o", "wide", "--chart=false", "--prometheus-url", prometheusURL, "--rate-interval", obsRateInterval).CombinedOutput()
	if err != nil {
		t.Fatalf("backfill top --once -o wide: %v\n%s", err, wide)
	}
	t.Logf("backfill top --once -o wide:\n%s", wide)
	checkTopTable(t, strings.Split(string(wide), "\n")[3:], want)
}

// checkTopUsed wants top's CPU used between the stat's values just before
// and just after it ran, give or take its two decimals.
func checkTopUsed(t *testing.T, line, figure string, before, after float64) {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(figure) + `: ([0-9.]+)`).FindStringSubmatch(line)
	if m == nil {
		t.Errorf("top shows no number for %s: %s", figure, line)
		return
	}
	got, _ := strconv.ParseFloat(m[1], 64)
	if got < math.Min(before, after)-0.005 || got > math.Max(before, after)+0.005 {
		t.Errorf("top shows %s %s; the dashboard's stat showed %.3f before and %.3f after", figure, m[1], before, after)
	}
}

// checkTopTable wants each node's row with the API's requests and pods.
func checkTopTable(t *testing.T, lines []string, want figures) {
	t.Helper()
	columns := cli.TopColumns()
	rows := map[string][]string{}
	for _, line := range lines {
		if fields := strings.Fields(line); len(fields) == len(columns)+1 {
			rows[fields[0]] = fields[1:]
		}
	}
	nodes := make([]string, 0, len(want.nodes))
	for n := range want.nodes {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, node := range nodes {
		nf := want.nodes[node]
		wantCells := map[string]string{
			"Pods online": strconv.Itoa(nf.podsOnline), "Pods offline": strconv.Itoa(nf.podsOffline),
			"CPU req online": fmt.Sprintf("%.2f", nf.cpuOnline), "CPU req offline": fmt.Sprintf("%.2f", nf.cpuOffline),
		}
		row, ok := rows[node]
		if !ok {
			t.Errorf("top has no row for node %s", node)
			continue
		}
		for i, col := range columns {
			if w, ok := wantCells[col.Name]; ok && row[i] != w {
				t.Errorf("top shows %s %s = %s, the API %s", node, col.Name, row[i], w)
			}
		}
	}
}
