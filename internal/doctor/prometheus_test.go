package doctor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

func TestCheckTargets(t *testing.T) {
	cases := map[string]struct {
		targets  []Target
		gpuNodes int
		want     []verdict
	}{
		"all up": {
			targets: []Target{{Job: "kubelet", Health: "up"}, {Job: "dcgm-exporter", Health: "up"}, {Job: "backfill-manager", Health: "up"}},
			want: []verdict{
				{CheckPrometheusTargets, StatusOK, ""}, {CheckPrometheusTargets, StatusOK, ""}, {CheckPrometheusTargets, StatusOK, ""},
			},
		},
		"dcgm down, manager missing": {
			targets:  []Target{{Job: "node-exporter", Health: "up"}, {Job: "gpu-metrics/dcgm-exporter", Health: "down", LastError: "connection refused"}},
			gpuNodes: 2,
			want: []verdict{
				{CheckPrometheusTargets, StatusOK, ""},
				{CheckPrometheusTargets, StatusFail, "dcgm-exporter"},
				{CheckPrometheusTargets, StatusFail, "backfill manager"},
			},
		},
		"no dcgm on a cluster without GPUs": {
			targets: []Target{{Job: "kubelet", Health: "up"}, {Job: "backfill", Health: "up"}},
			want: []verdict{
				{CheckPrometheusTargets, StatusOK, ""}, {CheckPrometheusTargets, StatusWarn, "dcgm-exporter"}, {CheckPrometheusTargets, StatusOK, ""},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := checkTargets(tc.targets, tc.gpuNodes)
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckData(t *testing.T) {
	series := map[string]int{"backfill_node_allocatable": 15, "container_cpu_usage_seconds_total": 0}
	got := checkData(series, map[string]error{"DCGM_FI_DEV_GPU_UTIL": context.DeadlineExceeded}, 2)
	want := []verdict{
		{CheckPrometheusData, StatusOK, ""},
		{CheckPrometheusData, StatusFail, "container_cpu_usage_seconds_total"},
		{CheckPrometheusData, StatusFail, "DCGM_FI_DEV_GPU_UTIL"},
	}
	if diff := cmp.Diff(want, verdicts(got)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(got[1].Finding, "returns no data") {
		t.Errorf("finding %q: want it to say no data", got[1].Finding)
	}
}

func TestCheckPrometheusSkippedWithoutURL(t *testing.T) {
	got := checkPrometheus(nil, 0)
	if len(got) != 1 || got[0].Status != StatusSkip || !strings.Contains(got[0].Finding, "skipped") {
		t.Errorf("got %+v, want one SKIP line", got)
	}
}

// ReadPrometheus decodes the API's envelope, counts series, runs the
// cockpit's queries and reports an answer that is not Prometheus's API.
func TestReadPrometheusDecodesTheAPI(t *testing.T) {
	firstPanel := CockpitPanels()[0]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Query().Get("query") == firstPanel.Expr:
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"3.5"]}]}}`))
		case r.URL.Query().Get("query") == expr.OfflinePods():
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[1,"1"]},{"metric":{"pod":"b"},"value":[1,"1"]}]}}`))
		case r.URL.Path == "/api/v1/targets":
			_, _ = w.Write([]byte(`{"status":"success","data":{"activeTargets":[{"labels":{"job":"dcgm-exporter"},"scrapeUrl":"http://10.0.0.1:9400/metrics","health":"down","lastError":"timeout"}]}}`))
		case r.URL.Query().Get("query") == "backfill_node_allocatable":
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"8"]},{"metric":{},"value":[1,"16"]}]}}`))
		case r.URL.Query().Get("query") == "DCGM_FI_DEV_GPU_UTIL":
			_, _ = w.Write([]byte(`{"status":"error","error":"bad query"}`))
		default:
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
		}
	}))
	defer srv.Close()
	v := ReadPrometheus(context.Background(), srv.Client(), srv.URL+"/")
	if v.Err != nil {
		t.Fatal(v.Err)
	}
	if diff := cmp.Diff([]Target{{Job: "dcgm-exporter", ScrapeURL: "http://10.0.0.1:9400/metrics", Health: "down", LastError: "timeout"}}, v.Targets); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"backfill_node_allocatable": 2, "container_cpu_usage_seconds_total": 0}, v.Series); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
	if err := v.Errs["DCGM_FI_DEV_GPU_UTIL"]; err == nil || !strings.Contains(err.Error(), "bad query") {
		t.Errorf("DCGM query error = %v, want the API's error", err)
	}
	if v.OfflinePods != 2 {
		t.Errorf("offline pods = %d, want 2", v.OfflinePods)
	}
	if len(v.Panels) != len(CockpitPanels()) {
		t.Errorf("%d panels read, want all %d", len(v.Panels), len(CockpitPanels()))
	}
	if got := v.Panels[firstPanel.Name]; got != (PanelData{Series: 1}) {
		t.Errorf("%s: %+v, want one series", firstPanel.Name, got)
	}

	notProm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>Grafana</html>", http.StatusNotFound)
	}))
	defer notProm.Close()
	if v := ReadPrometheus(context.Background(), notProm.Client(), notProm.URL); v.Err == nil || !strings.Contains(v.Err.Error(), "not Prometheus's API") {
		t.Errorf("a server that is not Prometheus: err %v, want one saying so", v.Err)
	}
}
