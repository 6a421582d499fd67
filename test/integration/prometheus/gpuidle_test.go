//go:build integration

package prometheus

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/doctor"
	"github.com/backfill-dev/backfill/internal/observability/dashboards"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// gpuDaySeries are a day of one GPU node's series, as dcgm-exporter
// (scraped without honorLabels, but for llm/infer-0's GPU), the manager
// and Prometheus itself store them, each a func of how long before the
// switch time (negative: after it) a sample is: GPU-0 online shop/web at
// 3% all day; GPU-1 online shop/web at 50% until the switch 12 h ago, then
// 2%; GPU-2 online llm/infer-0 at 80%; GPU-3 free at 0%, labelled with the
// exporter's pod; GPU-4 offline team-a/mnist-worker-0 at 0%; GPU-5
// offline team-a/old-worker-0 at 0% in the first 6 h only, gone since
// with its backfill_offline_pod_info.
type daySeries struct {
	name   string
	labels string
	// value at a time since the day began; NaN leaves it out.
	value func(since time.Duration) float64
}

const (
	exporterTarget = `job="dcgm-exporter",instance="10.0.0.9:9400"`
	exporterPod    = exporterTarget + `,namespace="gpu-operator",pod="dcgm-exporter-x2x45"`
)

func gpuDay() []daySeries {
	always := func(v float64) func(time.Duration) float64 { return func(time.Duration) float64 { return v } }
	firstHours := func(v float64, h time.Duration) func(time.Duration) float64 {
		return func(since time.Duration) float64 {
			if since < h {
				return v
			}
			return math.NaN()
		}
	}
	return []daySeries{
		{"up", exporterPod, always(1)},
		{expr.MetricGPUUtil, exporterPod + `,gpu="0",UUID="GPU-0",exported_namespace="shop",exported_pod="web-7d4b9c8f6-x2x45"`, always(3)},
		{expr.MetricGPUUtil, exporterPod + `,gpu="1",UUID="GPU-1",exported_namespace="shop",exported_pod="web-7d4b9c8f6-b2c4d"`, func(since time.Duration) float64 {
			if since < 13*time.Hour {
				return 50
			}
			return 2
		}},
		{expr.MetricGPUUtil, exporterTarget + `,namespace="llm",pod="infer-0",gpu="2",UUID="GPU-2"`, always(80)},
		{expr.MetricGPUUtil, exporterPod + `,gpu="3",UUID="GPU-3"`, always(0)},
		{expr.MetricGPUUtil, exporterPod + `,gpu="4",UUID="GPU-4",exported_namespace="team-a",exported_pod="mnist-worker-0"`, always(0)},
		{expr.MetricGPUUtil, exporterPod + `,gpu="5",UUID="GPU-5",exported_namespace="team-a",exported_pod="old-worker-0"`, firstHours(0, 6*time.Hour)},
		{expr.MetricOfflinePodInfo, `namespace="team-a",pod="mnist-worker-0",node="gpu-0",tfjob="mnist",replica_type="worker"`, always(1)},
		{expr.MetricOfflinePodInfo, `namespace="team-a",pod="old-worker-0",node="gpu-0",tfjob="old",replica_type="worker"`, firstHours(1, 6*time.Hour)},
	}
}

// writeOpenMetrics writes the series from start, a sample a minute for
// span, each family's series together, as promtool reads them.
func writeOpenMetrics(t *testing.T, path string, start time.Time, span time.Duration) {
	t.Helper()
	var b strings.Builder
	typed := map[string]bool{}
	for _, s := range gpuDay() {
		if !typed[s.name] {
			fmt.Fprintf(&b, "# TYPE %s gauge\n", s.name)
			typed[s.name] = true
		}
		for since := time.Duration(0); since <= span; since += time.Minute {
			if v := s.value(since); !math.IsNaN(v) {
				fmt.Fprintf(&b, "%s{%s} %g %d\n", s.name, s.labels, v, start.Add(since).Unix())
			}
		}
	}
	b.WriteString("# EOF\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGPUIdleOnRealPrometheus loads a day of GPU readings into a real
// Prometheus's TSDB (promtool tsdb create-blocks-from openmetrics) and
// asks it what doctor's check gpu-idle-online and the cockpit's idle
// online GPUs table ask: shop/web's two GPUs idled 24 h and 12 h, llm's
// busy GPU, the free GPU and the training pods' GPUs not at all.
func TestGPUIdleOnRealPrometheus(t *testing.T) {
	// The day began 25 h before the last 5-minute boundary, so that the
	// window of the last 24 h is full and GPU-1 switched at a boundary;
	// samples run on 20 minutes past now, so that the last is current
	// whenever the queries run.
	boundary := time.Now().Truncate(5 * time.Minute)
	start := boundary.Add(-25 * time.Hour)
	dir := t.TempDir()
	input := filepath.Join(dir, "day.om")
	writeOpenMetrics(t, input, start, 25*time.Hour+20*time.Minute)
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, binary(t, "promtool"), "tsdb", "create-blocks-from", "openmetrics", input, data).CombinedOutput(); err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}

	addr := freeAddr(t)
	prom := startPrometheusOn(t, addr, []byte("global:\n  scrape_interval: 1m\n"), data)
	prom.eventually(t, "Prometheus ready", func(ctx context.Context) error {
		return prom.get(ctx, "/-/ready", nil)
	})
	prom.eventually(t, "the day's blocks loaded", func(ctx context.Context) error {
		s, err := prom.query(ctx, `count(`+expr.MetricGPUUtil+`)`)
		if err == nil && (len(s) != 1 || s[0].Value[1] != "5") {
			err = fmt.Errorf("%v GPU series now, want 5 (GPU-5 gone)", s)
		}
		return err
	})

	// What doctor reads.
	v := doctor.ReadPrometheus(context.Background(), &http.Client{Timeout: timeout}, prom.url)
	if v.Err != nil || v.IdleGPUsErr != nil {
		t.Fatalf("doctor read Prometheus: %v; the idle GPUs: %v", v.Err, v.IdleGPUsErr)
	}
	if v.Series[expr.MetricGPUUtil] != 5 {
		t.Errorf("doctor counted %d %s series, want 5", v.Series[expr.MetricGPUUtil], expr.MetricGPUUtil)
	}
	t.Logf("idle online GPUs: %+v", v.IdleGPUs)
	got := map[string]float64{}
	for _, g := range v.IdleGPUs {
		got[g.Workload+" "+g.Pod+" GPU "+g.GPU] = g.Hours
	}
	// GPU-1 idled at every 5-minute step from the switch to the last
	// boundary, both counted: 145 steps, one more if the query crossed
	// the next boundary.
	want := map[string][2]float64{
		"shop/web web-7d4b9c8f6-x2x45 GPU 0": {24, 24},
		"shop/web web-7d4b9c8f6-b2c4d GPU 1": {12 + 1.0/12, 12 + 2.0/12},
	}
	if len(got) != len(want) {
		t.Errorf("idle GPUs %v, want only %v", got, want)
	}
	for k, w := range want {
		if h, ok := got[k]; !ok || h < w[0]-1e-9 || h > w[1]+1e-9 {
			t.Errorf("%s idled %v h, want %v to %v", k, got[k], w[0], w[1])
		}
	}

	// What the cockpit's table shows, per workload.
	wantCells := map[string]map[string]float64{
		"GPUs held":                    {"shop/web": 2, "llm/infer": 1},
		"GPUs idle (6h average < 10%)": {"shop/web": 2},
		"GPU utilisation (6h average)": {"shop/web": 2.5, "llm/infer": 80},
	}
	for _, c := range dashboards.OnlineGPUIdleColumns() {
		wc, ok := wantCells[c.Name]
		if !ok {
			continue
		}
		samples, err := prom.query(context.Background(), c.Expr)
		if err != nil {
			t.Fatalf("column %s: %v", c.Name, err)
		}
		cells := map[string]float64{}
		for _, s := range samples {
			f, _ := strconv.ParseFloat(s.Value[1].(string), 64)
			cells[s.Metric["workload"]] = f
		}
		if fmt.Sprint(cells) != fmt.Sprint(wc) {
			t.Errorf("column %s: %v, want %v", c.Name, cells, wc)
		}
	}
}
