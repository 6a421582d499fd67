package gpusim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
)

// fakeLister serves fixed nodes and pods, or err.
type fakeLister struct {
	nodes []corev1.Node
	pods  []corev1.Pod
	err   error
}

func (f fakeLister) Nodes(context.Context) ([]corev1.Node, error) { return f.nodes, f.err }
func (f fakeLister) Pods(context.Context) ([]corev1.Pod, error)   { return f.pods, f.err }

// get serves one GET of path from a server built by NewServer.
func get(t *testing.T, l Lister, path string) (int, string) {
	t.Helper()
	srv := NewServer("127.0.0.1:0", l)
	rec := httptest.NewRecorder()
	srv.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return rec.Code, string(body)
}

// series is one parsed sample: its labels and value.
type series struct {
	labels map[string]string
	value  float64
}

func parse(t *testing.T, body string) map[string][]series {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the exposition: %v\n%s", err, body)
	}
	out := map[string][]series{}
	for name, mf := range families {
		if mf.GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s is a %v, want a gauge", name, mf.GetType())
		}
		for _, m := range mf.GetMetric() {
			s := series{labels: map[string]string{}, value: m.GetGauge().GetValue()}
			for _, lp := range m.GetLabel() {
				s.labels[lp.GetName()] = lp.GetValue()
			}
			out[name] = append(out[name], s)
		}
	}
	return out
}

func TestServerMetrics(t *testing.T) {
	l := fakeLister{
		nodes: []corev1.Node{gpuNode("gpu-a", 2), gpuNode("cpu-a", 0)},
		pods: []corev1.Pod{
			makePod("train-worker-0", "gpu-a").container("tensorflow", 1).annotate(UtilAnnotation, "42").obj(),
		},
	}
	code, body := get(t, l, MetricsPath)
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d, body:\n%s", MetricsPath, code, body)
	}
	got := parse(t, body)

	var names []string
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	wantNames := []string{
		"DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_TEMP",
		"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
	}
	// Exactly these: a dedicated registry, so no go_* or process_* series.
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Fatalf("metric names (-want +got):\n%s", diff)
	}

	gpus := Snapshot(l.nodes, l.pods, t0)
	for _, name := range wantNames {
		if len(got[name]) != 2 {
			t.Errorf("%s has %d series, want one per GPU (2)", name, len(got[name]))
		}
	}
	wantUtil := []series{
		{value: 42, labels: map[string]string{
			"gpu": "0", "UUID": gpus[0].UUID, "device": "nvidia0", "modelName": ModelName, "Hostname": "gpu-a",
			"pod": "train-worker-0", "namespace": "ml", "container": "tensorflow",
		}},
		{value: 0, labels: map[string]string{
			"gpu": "1", "UUID": gpus[1].UUID, "device": "nvidia1", "modelName": ModelName, "Hostname": "gpu-a",
			"pod": "", "namespace": "", "container": "",
		}},
	}
	gotUtil := got["DCGM_FI_DEV_GPU_UTIL"]
	sort.Slice(gotUtil, func(i, j int) bool { return gotUtil[i].labels["gpu"] < gotUtil[j].labels["gpu"] })
	if diff := cmp.Diff(wantUtil, gotUtil, cmp.AllowUnexported(series{})); diff != "" {
		t.Errorf("DCGM_FI_DEV_GPU_UTIL (-want +got):\n%s", diff)
	}
	// Memory in MiB, by GPU index: at 42% the held GPU holds its model
	// (25%) and 70% of 42% more, 54.4% of 80 GiB; the free GPU nothing.
	for name, want := range map[string][2]float64{
		"DCGM_FI_DEV_FB_USED": {44564, 0},
		"DCGM_FI_DEV_FB_FREE": {FBTotalMiB - 44564, FBTotalMiB},
	} {
		for _, s := range got[name] {
			if i, _ := strconv.Atoi(s.labels["gpu"]); s.value != want[i] {
				t.Errorf("%s of GPU %d = %v MiB, want %v", name, i, s.value, want[i])
			}
		}
	}
	// dcgm-exporter writes the empty labels of a free GPU out; so do we.
	if !strings.Contains(body, `gpu="1",modelName="NVIDIA A100-SXM4-80GB (simulated)",namespace="",pod=""`) {
		t.Errorf("the free GPU's series lack explicit empty pod labels:\n%s", body)
	}
	if !strings.Contains(body, "SIMULATED") {
		t.Errorf("help texts do not say the metrics are simulated:\n%s", body)
	}
}

func TestServerFailsTheScrapeWhenListingFails(t *testing.T) {
	code, body := get(t, fakeLister{err: errors.New("apiserver unreachable")}, MetricsPath)
	if code != http.StatusInternalServerError {
		t.Errorf("status %d, want 500; body:\n%s", code, body)
	}
	if !strings.Contains(body, "apiserver unreachable") {
		t.Errorf("body does not carry the cause:\n%s", body)
	}
}

func TestServerRootSaysSimulator(t *testing.T) {
	code, body := get(t, fakeLister{}, "/")
	if code != http.StatusOK || !strings.Contains(body, "SIMULATED") {
		t.Errorf("GET /: status %d, body %q; want 200 saying SIMULATED", code, body)
	}
	if code, _ := get(t, fakeLister{}, "/nothing"); code != http.StatusNotFound {
		t.Errorf("GET /nothing: status %d, want 404", code)
	}
}
