package latencysim

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
)

// scrape serves one GET of path from h.
func scrape(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return rec.Code, string(body)
}

func parseFamilies(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the exposition: %v\n%s", err, body)
	}
	return families
}

// TestCollectorServesGrowingHistograms: one classic histogram per opted-in
// pod, labelled with its namespace and pod, whose counters grow from one
// scrape to the next.
func TestCollectorServesGrowingHistograms(t *testing.T) {
	l := &fakeLister{
		nodes: []corev1.Node{cpuNode("cpu-0", "16")},
		pods: []corev1.Pod{
			makePod("online-business", "web-0", "cpu-0").container("2", "4").uses("1600m").objective("200ms").obj(),
			makePod("online-business", "web-1", "cpu-0").container("2", "4").uses("1").objective("200ms").obj(),
			makePod("online-business", "cart", "cpu-0").container("2", "4").uses("1").obj(),
		},
	}
	now := t0
	c := NewCollector(l, 1)
	c.now = func() time.Time { return now }
	reg := handlerFor(c)

	counts := func() map[string]uint64 {
		code, body := scrape(t, reg, MetricsPath)
		if code != http.StatusOK {
			t.Fatalf("GET %s: status %d\n%s", MetricsPath, code, body)
		}
		if !strings.Contains(body, "SIMULATED") {
			t.Errorf("the help text does not say the histogram is simulated:\n%s", body)
		}
		families := parseFamilies(t, body)
		if len(families) != 1 {
			t.Fatalf("%d metric families, want only the histogram:\n%s", len(families), body)
		}
		mf := families["http_server_request_duration_seconds"]
		if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
			t.Fatalf("no classic histogram http_server_request_duration_seconds:\n%s", body)
		}
		out := map[string]uint64{}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if len(labels) != 2 || labels["namespace"] != "online-business" {
				t.Errorf("labels %v, want namespace and pod", labels)
			}
			if n := len(m.GetHistogram().GetBucket()); n != len(Buckets())+1 {
				t.Errorf("%d buckets, want %d and +Inf", n, len(Buckets()))
			}
			out[labels["pod"]] = m.GetHistogram().GetSampleCount()
		}
		return out
	}
	first := counts()
	if len(first) != 2 || first["web-0"] != 0 || first["web-1"] != 0 {
		t.Errorf("first scrape: %v, want web-0 and web-1 with no requests yet", first)
	}
	now = now.Add(10 * time.Second)
	second := counts()
	if second["web-0"] <= second["web-1"] || second["web-1"] == 0 {
		t.Errorf("10s later: %v, want both grown, the busier web-0 more", second)
	}
}

func TestCollectorFailsTheScrapeWhenListingFails(t *testing.T) {
	code, body := scrape(t, Handler(&fakeLister{err: errors.New("apiserver unreachable")}, 1), MetricsPath)
	if code != http.StatusInternalServerError || !strings.Contains(body, "apiserver unreachable") {
		t.Errorf("status %d, body:\n%s\nwant 500 with the cause", code, body)
	}
}

func TestServerRootSaysSimulator(t *testing.T) {
	srv := NewServer("127.0.0.1:0", &fakeLister{}, 1)
	if code, body := scrape(t, srv.Handler, "/"); code != http.StatusOK || !strings.Contains(body, "SIMULATED") {
		t.Errorf("GET /: status %d, body %q; want 200 saying SIMULATED", code, body)
	}
	if code, _ := scrape(t, srv.Handler, "/nothing"); code != http.StatusNotFound {
		t.Errorf("GET /nothing: status %d, want 404", code)
	}
}
