package doctor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

func TestCheckGPUIdleOnline(t *testing.T) {
	withDCGM := func(idle []IdleGPU) *PrometheusView {
		return &PrometheusView{Series: map[string]int{expr.MetricGPUUtil: 8}, IdleGPUs: idle}
	}
	cases := map[string]struct {
		view *PrometheusView
		want []verdict
		// says are in the findings, in order.
		says []string
	}{
		"no Prometheus URL: the prometheus SKIP says it": {view: nil},
		"Prometheus unreadable": {
			view: &PrometheusView{Err: errors.New("connection refused")},
			want: []verdict{{CheckGPUIdleOnline, StatusSkip, ""}},
			says: []string{"Prometheus could not be read"},
		},
		"no DCGM series": {
			view: &PrometheusView{Series: map[string]int{expr.MetricGPUUtil: 0}},
			want: []verdict{{CheckGPUIdleOnline, StatusSkip, ""}},
			says: []string{"no GPU utilisation in Prometheus (DCGM_FI_DEV_GPU_UTIL, it has no series)"},
		},
		"DCGM query failed": {
			view: &PrometheusView{Series: map[string]int{}, Errs: map[string]error{expr.MetricGPUUtil: errors.New("timeout")}},
			want: []verdict{{CheckGPUIdleOnline, StatusSkip, ""}},
			says: []string{"querying it failed: timeout"},
		},
		"idle query failed": {
			view: &PrometheusView{Series: map[string]int{expr.MetricGPUUtil: 8}, IdleGPUsErr: errors.New("many-to-many matching not allowed")},
			want: []verdict{{CheckGPUIdleOnline, StatusWarn, ""}},
			says: []string{"many-to-many"},
		},
		"no online GPU idle": {
			view: withDCGM(nil),
			want: []verdict{{CheckGPUIdleOnline, StatusOK, ""}},
			says: []string{"no online pod held a GPU below 10% utilisation for 4h or more of the last 24h"},
		},
		"only short spells": {
			view: withDCGM([]IdleGPU{{Workload: "shop/web", Pod: "web-7d4b9c8f6-x2x45", GPU: "0", Hours: 3.9}, {Workload: "llm/infer", Pod: "infer-0", GPU: "1", Hours: 1}}),
			want: []verdict{{CheckGPUIdleOnline, StatusOK, ""}},
			says: []string{"(4.9 GPU-hours idle, under 4h per GPU, 2 workload(s))"},
		},
		"one GPU two pods held idle in turn counts once, its hours summed": {
			view: withDCGM([]IdleGPU{
				{Workload: "shop/web", Pod: "web-7d4b9c8f6-x2x45", GPU: "0", UUID: "GPU-a", Hours: 3},
				{Workload: "shop/web", Pod: "web-7d4b9c8f6-b2c4d", GPU: "0", UUID: "GPU-a", Hours: 2},
				{Workload: "shop/web", Pod: "web-7d4b9c8f6-b2c4d", GPU: "1", UUID: "GPU-b", Hours: 1},
			}),
			want: []verdict{{CheckGPUIdleOnline, StatusWarn, "workload shop/web"}},
			says: []string{"held 1 GPU(s) below 10% utilisation for 4h or more of the last 24h: 6.0 GPU-hours idle; the most idle GPU sat idle 5.0h of the last 24h in all (pods web-7d4b9c8f6-b2c4d, web-7d4b9c8f6-x2x45)"},
		},
		"two workloads idle at night, the most GPU-hours first": {
			view: withDCGM([]IdleGPU{
				{Workload: "llm/infer", Pod: "infer-0", GPU: "2", Hours: 9},
				{Workload: "shop/web", Pod: "web-7d4b9c8f6-x2x45", GPU: "0", Hours: 24},
				{Workload: "shop/web", Pod: "web-7d4b9c8f6-b2c4d", GPU: "1", Hours: 12},
				{Workload: "shop/web", Pod: "web-7d4b9c8f6-zz9kq", GPU: "3", Hours: 2},
				{Workload: "team/bench", Pod: "bench", GPU: "4", Hours: 3},
			}),
			want: []verdict{{CheckGPUIdleOnline, StatusWarn, "workload shop/web"}, {CheckGPUIdleOnline, StatusWarn, "workload llm/infer"}},
			says: []string{
				"online workload shop/web held 2 GPU(s) below 10% utilisation for 4h or more of the last 24h: 38.0 GPU-hours idle; the most idle GPU sat idle 24.0h of the last 24h in all (pods web-7d4b9c8f6-b2c4d, web-7d4b9c8f6-x2x45)",
				"online workload llm/infer held 1 GPU(s) below 10% utilisation for 4h or more of the last 24h: 9.0 GPU-hours idle; the most idle GPU sat idle 9.0h of the last 24h in all (pods infer-0)",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := checkGPUIdleOnline(tc.view)
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s\n%+v", diff, got)
			}
			for i, s := range tc.says {
				if !strings.Contains(got[i].Finding, s) {
					t.Errorf("finding %q, want it to say %q", got[i].Finding, s)
				}
			}
			for _, r := range got {
				if r.Status == StatusWarn && r.Fix == "" {
					t.Errorf("a WARN without a fix: %+v", r)
				}
			}
		})
	}
}

// readIdleGPUs decodes each GPU's hours and labels, and refuses a value
// that is no number.
func TestReadIdleGPUs(t *testing.T) {
	answer := `{"status":"success","data":{"resultType":"vector","result":[` +
		`{"metric":{"workload":"shop/web","namespace":"shop","pod":"web-7d4b9c8f6-x2x45","owner":"web","gpu":"0","UUID":"GPU-0"},"value":[1,"23.5"]}]}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("query") != IdleGPUsQuery() {
			_, _ = w.Write([]byte(`{"status":"error","error":"unexpected query"}`))
			return
		}
		_, _ = w.Write([]byte(answer))
	}))
	defer srv.Close()
	got, err := readIdleGPUs(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]IdleGPU{{Workload: "shop/web", Pod: "web-7d4b9c8f6-x2x45", GPU: "0", UUID: "GPU-0", Hours: 23.5}}, got); diff != "" {
		t.Errorf("idle GPUs (-want +got):\n%s", diff)
	}
	answer = strings.Replace(answer, `"23.5"`, `"soon"`, 1)
	if _, err := readIdleGPUs(context.Background(), srv.Client(), srv.URL); err == nil || !strings.Contains(err.Error(), `"soon" is no number`) {
		t.Errorf("a value that is no number: err %v, want one saying so", err)
	}
}
