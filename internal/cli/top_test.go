package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/backfill-dev/backfill/internal/observability/dashboards"
)

// fakePrometheus answers /api/v1/query with the vector the results map
// gives a query, by node ("" for a series without labels), and an empty
// vector for any other query; /api/v1/query_range with the one series the
// ranges map gives a query, a value per step from the range's start (NaN
// leaves a step out), and an empty matrix for any other. It records the
// queries it was asked, and the ranges.
type fakePrometheus struct {
	results     map[string]map[string]float64
	ranges      map[string][]float64
	asked       []string
	askedRanges []url.Values
}

func (f *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/v1/query":
		f.serveQuery(w, r)
	case "/api/v1/query_range":
		f.serveRange(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakePrometheus) serveQuery(w http.ResponseWriter, r *http.Request) {
	q := r.FormValue("query")
	f.asked = append(f.asked, q)
	result := []map[string]any{}
	for node, v := range f.results[q] {
		metric := map[string]string{}
		if node != "" {
			metric["node"] = node
		}
		result = append(result, map[string]any{"metric": metric, "value": []any{1700000000, fmt.Sprint(v)}})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": result}})
}

func (f *fakePrometheus) serveRange(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.askedRanges = append(f.askedRanges, r.Form)
	start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
	step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
	result := []map[string]any{}
	if values, ok := f.ranges[r.Form.Get("query")]; ok {
		points := []any{}
		for i, v := range values {
			if !math.IsNaN(v) {
				points = append(points, []any{start + float64(i)*step, fmt.Sprint(v)})
			}
		}
		result = append(result, map[string]any{"metric": map[string]string{}, "values": points})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": result}})
}

// asTop substitutes a dashboard query the way top does with a 2m window.
func asTop(expr string) string {
	return dashboards.Substitute(expr, map[string]string{"namespace": ".*", "tfjob": ".*", "__rate_interval": "2m"})
}

func TestTopFrame(t *testing.T) {
	figures := dashboards.CockpitFigures()
	columns := TopColumns()
	column := func(name string) string {
		for _, c := range columns {
			if c.Name == name {
				return asTop(c.Expr)
			}
		}
		t.Fatalf("no column %q", name)
		return ""
	}
	fake := &fakePrometheus{results: map[string]map[string]float64{
		asTop(figures[0].Query.Expr): {"": 12.5},
		asTop(figures[1].Query.Expr): {"": 3},
		asTop(figures[2].Query.Expr): {"": 85.26},
		asTop(figures[3].Query.Expr): {"": 14},
		asTop(figures[4].Query.Expr): {"": 61.04},
		asTop(figures[5].Query.Expr): {"": 33.5},
		column("Pods online"):        {"cpu-node-0": 6, "gpu-node-0": 0},
		column("CPU req online"):     {"cpu-node-0": 12, "gpu-node-0": 0},
		column("Mem req offline"):    {"gpu-node-0": 4 * 1024 * 1024 * 1024},
		column("GPUs free"):          {"gpu-node-0": 7},
		column("GPUs lent"):          {"gpu-node-0": 1, "cpu-node-0": 0},
		column("CPU reclaimable"):    {"cpu-node-0": 2.5, "gpu-node-0": 0},
		column("Reclaim frozen"):     {"cpu-node-0": 0, "gpu-node-0": 1},
	}}
	server := httptest.NewServer(fake)
	defer server.Close()
	client, err := api.NewClient(api.Config{Address: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	top := &top{api: promv1.NewAPI(client), opts: topOptions{prometheusURL: server.URL, rateInterval: 2 * time.Minute, once: true, output: outputWide}}
	var out bytes.Buffer
	if err := top.run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	// Four figures a line: the first as before, for scripts that read it.
	if diff := cmp.Diff("Online CPU used: 12.50   Offline CPU used: 3.00   GPU utilisation of training pods: 85%   GPUs free: 14", lines[1]); diff != "" {
		t.Errorf("figures line (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("Cluster CPU utilisation: 61%   Cluster memory utilisation: 34%", lines[2]); diff != "" {
		t.Errorf("second figures line (-want +got):\n%s", diff)
	}
	got := map[string]map[string]string{}
	for _, line := range lines[5:] {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != len(columns)+1 {
			t.Fatalf("row %q has %d cells, want %d", line, len(fields), len(columns)+1)
		}
		row := map[string]string{}
		for i, c := range columns {
			row[c.Name] = fields[i+1]
		}
		got[fields[0]] = row
	}
	want := map[string]map[string]string{"cpu-node-0": {}, "gpu-node-0": {}}
	for node := range want {
		for _, c := range columns {
			want[node][c.Name] = "-"
		}
	}
	want["cpu-node-0"]["Pods online"], want["cpu-node-0"]["CPU req online"] = "6", "12.00"
	want["gpu-node-0"]["Pods online"], want["gpu-node-0"]["CPU req online"] = "0", "0.00"
	want["gpu-node-0"]["Mem req offline"], want["gpu-node-0"]["GPUs free"] = "4.0Gi", "7"
	want["gpu-node-0"]["GPUs lent"], want["cpu-node-0"]["GPUs lent"] = "1", "0"
	want["cpu-node-0"]["CPU reclaimable"], want["gpu-node-0"]["CPU reclaimable"] = "2.50", "0.00"
	want["cpu-node-0"]["Reclaim frozen"], want["gpu-node-0"]["Reclaim frozen"] = "0", "1"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watermark table (-want +got):\n%s\n%s", diff, out.String())
	}
	// Every query top runs is one of the dashboard's, substituted, or
	// its own column of GPUs lent.
	if len(fake.asked) != len(figures)+len(columns) {
		t.Errorf("top ran %d queries, want %d (one per figure and column)", len(fake.asked), len(figures)+len(columns))
	}
	if len(fake.askedRanges) != 0 {
		t.Errorf("top ran %d range queries without the chart, want none", len(fake.askedRanges))
	}
}

func TestTopFailsOnPrometheusError(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
	}))
	defer server.Close()
	client, err := api.NewClient(api.Config{Address: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	top := &top{api: promv1.NewAPI(client), opts: topOptions{prometheusURL: server.URL, rateInterval: time.Minute, once: true}}
	err = top.run(context.Background(), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "parse error") {
		t.Errorf("run = %v, want the Prometheus error", err)
	}
}

func TestTopFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"zero interval":      {args: []string{"--interval=0s", "--prometheus-url=http://127.0.0.1:1"}, want: "--interval 0s: must be positive"},
		"not a duration":     {args: []string{"--interval=fast"}, want: `invalid argument "fast" for "--interval"`},
		"not a URL":          {args: []string{"--prometheus-url=127.0.0.1:9090"}, want: "want an http(s) URL"},
		"tiny rate interval": {args: []string{"--rate-interval=10ms", "--prometheus-url=http://127.0.0.1:1"}, want: "--rate-interval 10ms: must be at least 1s"},
		"no cluster running": {args: []string{"--once", "--state-dir=" + t.TempDir()}, want: "pass --prometheus-url"},
		"arguments":          {args: []string{"extra"}, want: "unknown command"},
		"output format":      {args: []string{"-o", "json", "--prometheus-url=http://127.0.0.1:1"}, want: `unknown output format "json": use -o wide`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := NewRootCommand()
			root.SetArgs(append([]string{"top"}, tc.args...))
			root.SetOut(&bytes.Buffer{})
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !isUsageError(err) {
				t.Errorf("top %v = %v, want a usage error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestTopFindsDevPrometheus: without --prometheus-url, top queries the
// Prometheus a running local cluster recorded in its state file.
func TestTopFindsDevPrometheus(t *testing.T) {
	fake := &fakePrometheus{}
	server := httptest.NewServer(fake)
	defer server.Close()
	dir := t.TempDir()
	// This test's own process stands for the running `dev up`.
	state := fmt.Sprintf(`{"pid": %d, "ready": true, "prometheusURL": %q}`, os.Getpid(), server.URL)
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"top", "--once", "--state-dir", dir})
	if err := root.Execute(); err != nil {
		t.Fatalf("top: %v", err)
	}
	if !strings.Contains(out.String(), "Prometheus "+server.URL) || len(fake.asked) == 0 {
		t.Errorf("top did not query the local cluster's Prometheus %s (asked %d queries):\n%s", server.URL, len(fake.asked), out.String())
	}
}

// chartSeries are an hour of CPU use a minute apart, as the fake answers
// the chart's range queries: online pods swinging between 1 and 4 cores,
// training starting 15 minutes in at 2 cores, then dropping to 1.
func chartSeries() map[string][]float64 {
	online, offline := make([]float64, 61), make([]float64, 61)
	for i := range online {
		online[i] = 1 + 3*math.Abs(math.Sin(float64(i)/12))
		switch {
		case i < 15:
			offline[i] = math.NaN()
		case i < 45:
			offline[i] = 2
		default:
			offline[i] = 1
		}
	}
	q := dashboards.CPUUsedByTier()
	return map[string][]float64{asTop(q[0].Expr): online, asTop(q[1].Expr): offline}
}

// newTestTop is a top on a fake Prometheus.
func newTestTop(t *testing.T, fake *fakePrometheus, chart bool) *top {
	t.Helper()
	server := httptest.NewServer(fake)
	t.Cleanup(server.Close)
	client, err := api.NewClient(api.Config{Address: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	return &top{api: promv1.NewAPI(client), opts: topOptions{prometheusURL: server.URL, rateInterval: 2 * time.Minute, once: true, chart: chart}}
}

func TestTopChart(t *testing.T) {
	fake := &fakePrometheus{ranges: chartSeries()}
	top := newTestTop(t, fake, true)
	chart, err := top.cpuChart(context.Background(), fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "top-chart", chart)

	// The golden aside: both series drawn, named in the caption, within
	// 100 columns.
	lines := strings.Split(strings.TrimRight(chart, "\n"), "\n")
	caption := "CPU used (cores), last hour: ─ online used   • offline used"
	if got := strings.TrimSpace(lines[len(lines)-1]); got != caption {
		t.Errorf("caption %q, want %q", got, caption)
	}
	var plot strings.Builder
	for _, line := range lines {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("line of %d columns, want at most 100: %q", n, line)
		}
		if _, body, ok := strings.Cut(line, "┤"); ok {
			plot.WriteString(body)
		}
	}
	if !strings.Contains(plot.String(), "•") {
		t.Errorf("the offline series is not drawn:\n%s", chart)
	}
	if !strings.ContainsAny(plot.String(), "─╭╮╰╯│") {
		t.Errorf("the online series is not drawn:\n%s", chart)
	}

	// One range query per series, the cockpit's, over the last hour a
	// minute apart.
	want := []string{asTop(dashboards.CPUUsedByTier()[0].Expr), asTop(dashboards.CPUUsedByTier()[1].Expr)}
	var asked []string
	for _, r := range fake.askedRanges {
		asked = append(asked, r.Get("query"))
		start, _ := strconv.ParseFloat(r.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Get("end"), 64)
		if end != float64(fixedNow.Unix()) || end-start != 3600 || r.Get("step") != "60" {
			t.Errorf("range start %v end %v step %s, want the hour to %v a minute apart", start, end, r.Get("step"), fixedNow.Unix())
		}
	}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("range queries (-want +got):\n%s", diff)
	}
}

// TestTopChartWithoutData: a Prometheus without the series says so under
// the caption instead of drawing an empty frame.
func TestTopChartWithoutData(t *testing.T) {
	top := newTestTop(t, &fakePrometheus{}, true)
	chart, err := top.cpuChart(context.Background(), fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if want := "CPU used (cores), last hour: ─ online used   • offline used: no data\n"; chart != want {
		t.Errorf("chart %q, want %q", chart, want)
	}
}

// TestTopChartFlag: the chart follows the table with --once, and
// --chart=false leaves it and its queries out.
func TestTopChartFlag(t *testing.T) {
	for _, tc := range []struct {
		flag   string
		charts bool
	}{{"--chart=true", true}, {"--chart=false", false}} {
		t.Run(tc.flag, func(t *testing.T) {
			fake := &fakePrometheus{ranges: chartSeries()}
			server := httptest.NewServer(fake)
			defer server.Close()
			root := NewRootCommand()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetArgs([]string{"top", "--once", "--prometheus-url", server.URL, tc.flag})
			if err := root.Execute(); err != nil {
				t.Fatalf("top: %v", err)
			}
			drawn := strings.Contains(out.String(), "CPU used (cores), last hour")
			if drawn != tc.charts || (len(fake.askedRanges) > 0) != tc.charts {
				t.Errorf("top %s: chart drawn %v after %d range queries, want %v:\n%s", tc.flag, drawn, len(fake.askedRanges), tc.charts, out.String())
			}
			if tc.charts && strings.Index(out.String(), "CPU used (cores)") < strings.Index(out.String(), "NODE") {
				t.Errorf("the chart comes before the table:\n%s", out.String())
			}
		})
	}
}

// TestTopGlance: without -o wide the node table of a realistic cluster
// (long cloud node names, hundreds of pods, large numbers) fits 120
// columns and has the glance's columns; with -o wide it has every column
// and every name whole.
func TestTopGlance(t *testing.T) {
	nodes := []string{
		"ip-10-0-112-34.eu-west-1.compute.internal",
		"ip-10-0-112-35.eu-west-1.compute.internal",
		"gke-prod-inference-a100-pool-7f3c9d21-x8kq",
		"gke-prod-inference-a100-pool-7f3c9d21-zz01",
		"cpu-0",
	}
	sorted := slices.Sorted(slices.Values(nodes))
	results := map[string]map[string]float64{}
	for i, c := range TopColumns() {
		byNode := map[string]float64{}
		for j, n := range nodes {
			v := float64(100*(i+1) + j)
			switch c.Unit {
			case dashboards.UnitCores:
				v = 123.45 + float64(j)
			case dashboards.UnitBytes:
				v = 1000.5 * 1024 * 1024 * 1024
			}
			byNode[n] = v
		}
		results[asTop(c.Expr)] = byNode
	}
	for _, output := range []string{outputTable, outputWide} {
		t.Run("-o="+output, func(t *testing.T) {
			fake := &fakePrometheus{results: results}
			top := newTestTop(t, fake, false)
			top.opts.output = output
			var out bytes.Buffer
			if err := top.run(context.Background(), &out); err != nil {
				t.Fatal(err)
			}
			columns, headers := tableColumns(output == outputWide)
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			var table []string
			for i, line := range lines {
				if strings.HasPrefix(strings.TrimSpace(line), "NODE") {
					table = lines[i:]
				}
				if n := utf8.RuneCountInString(line); output == outputTable && n > tableWidth {
					t.Errorf("line of %d columns, want at most %d: %q", n, tableWidth, line)
				}
			}
			t.Logf("top -o %q:\n%s", output, out.String())
			if len(table) != 1+len(nodes) {
				t.Fatalf("table of %d lines, want a header and %d nodes:\n%s", len(table), len(nodes), out.String())
			}
			for _, h := range headers {
				if !strings.Contains(table[0], h) {
					t.Errorf("header %q lacks %s", table[0], h)
				}
			}
			for i, line := range table[1:] {
				fields := strings.Fields(line)
				if len(fields) != len(columns)+1 {
					t.Fatalf("row %q has %d cells, want %d", line, len(fields), len(columns)+1)
				}
				if output == outputWide && fields[0] != sorted[i] {
					t.Errorf("row %d names %s, want %s whole", i, fields[0], sorted[i])
				}
			}
			if output == outputWide {
				if len(columns) != len(TopColumns()) {
					t.Errorf("-o wide has %d columns, want all %d", len(columns), len(TopColumns()))
				}
				return
			}
			// Each glance row reads as one node: ends kept, told apart.
			names := map[string]bool{}
			for _, line := range table[1:] {
				name := strings.Fields(line)[0]
				names[name] = true
				if strings.Contains(name, "…") && !strings.HasPrefix(name, "ip-10-0-112-3") && !strings.HasPrefix(name, "gke-prod-") {
					t.Errorf("elided name %q lost its start", name)
				}
			}
			if len(names) != len(nodes) || !names["cpu-0"] {
				t.Errorf("glance names %v, want %d told apart, cpu-0 whole", names, len(nodes))
			}
			for _, h := range []string{"PODS OFF", "CPU ON", "CPU OFF", "BATCH CPU", "BATCH HELD", "GPU ALLOC", "GPU FREE", "GPU LENT", "FROZEN"} {
				if !strings.Contains(table[0], h) {
					t.Errorf("glance header %q lacks %s", table[0], h)
				}
			}
			// Only the glance's queries ran.
			if got, want := len(fake.asked), len(dashboards.CockpitFigures())+len(columns); got != want {
				t.Errorf("top ran %d queries, want %d", got, want)
			}
		})
	}
}

func TestElide(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"cpu-0", 12, "cpu-0"},
		{"ip-10-0-112-34.eu-west-1.compute.internal", 20, "ip-10-0-11….internal"},
		{"gke-a100-pool-x8kq", 17, "gke-a100…ool-x8kq"},
	} {
		if got := elide(tc.in, tc.width); got != tc.want || utf8.RuneCountInString(got) > tc.width {
			t.Errorf("elide(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// top's own column is PromQL over the manager's requests of offline pods
// in GPUs, and sits in the glance right after the GPUs free.
func TestLentColumn(t *testing.T) {
	c := lentColumn()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(c.Expr)
	if err != nil {
		t.Fatalf("GPUs lent: %q is no PromQL: %v", c.Expr, err)
	}
	if got := e.String(); !strings.Contains(got, `backfill_node_requests{resource="nvidia_com_gpu",tier="offline"}`) || !strings.Contains(got, "sum by (node)") {
		t.Errorf("GPUs lent reads %s, want the offline pods' GPU requests by node", got)
	}
	_, headers := tableColumns(false)
	i := slices.Index(headers, "GPU FREE")
	if i < 0 || i+1 >= len(headers) || headers[i+1] != "GPU LENT" {
		t.Errorf("glance headers %v: want GPU LENT right after GPU FREE", headers)
	}
}
