package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/backfill-dev/backfill/internal/observability/dashboards"
)

// fakePrometheus answers /api/v1/query with the vector the results map
// gives a query, by node ("" for a series without labels), and an empty
// vector for any other query; it records the queries it was asked.
type fakePrometheus struct {
	results map[string]map[string]float64
	asked   []string
}

func (f *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
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

// asTop substitutes a dashboard query the way top does with a 2m window.
func asTop(expr string) string {
	return dashboards.Substitute(expr, map[string]string{"namespace": ".*", "tfjob": ".*", "__rate_interval": "2m"})
}

func TestTopFrame(t *testing.T) {
	figures := dashboards.CockpitFigures()
	columns := dashboards.WatermarkColumns()
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
		column("Pods online"):        {"cpu-node-0": 6, "gpu-node-0": 0},
		column("CPU req online"):     {"cpu-node-0": 12, "gpu-node-0": 0},
		column("Mem req offline"):    {"gpu-node-0": 4 * 1024 * 1024 * 1024},
		column("GPUs free"):          {"gpu-node-0": 7},
	}}
	server := httptest.NewServer(fake)
	defer server.Close()
	client, err := api.NewClient(api.Config{Address: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	top := &top{api: promv1.NewAPI(client), opts: topOptions{prometheusURL: server.URL, rateInterval: 2 * time.Minute, once: true}}
	var out bytes.Buffer
	if err := top.run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if diff := cmp.Diff("Online CPU used: 12.50   Offline CPU used: 3.00   GPU utilisation of training pods: 85%   GPUs free: 14", lines[1]); diff != "" {
		t.Errorf("figures line (-want +got):\n%s", diff)
	}
	got := map[string]map[string]string{}
	for _, line := range lines[4:] {
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
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watermark table (-want +got):\n%s\n%s", diff, out.String())
	}
	// Every query top runs is one of the dashboard's, substituted.
	if len(fake.asked) != len(figures)+len(columns) {
		t.Errorf("top ran %d queries, want %d (one per figure and column)", len(fake.asked), len(figures)+len(columns))
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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := newRootCommand()
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
	root := newRootCommand()
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
