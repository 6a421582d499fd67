package promconfig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func validTargets() Targets {
	return Targets{
		ManagersFile: "/state/prometheus/managers.json",
		Kwok:         "127.0.0.1:10247",
		Nodes:        []string{"gpu-node-1", "gpu-node-0"},
		GPUSim:       "127.0.0.1:9400",
		LatencySim:   "127.0.0.1:9401",
		Prometheus:   "127.0.0.1:9090",
		RuleFiles:    []string{"/state/prometheus/rules.yaml"},
		Alertmanager: "127.0.0.1:9093",
	}
}

func TestConfig(t *testing.T) {
	got, err := Config(validTargets())
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	// The expectation is written as a reader of the file would check it;
	// both sides are decoded, so the comparison ignores layout.
	const want = `
global:
  scrape_interval: 5s
  scrape_timeout: 4s
  evaluation_interval: 5s
rule_files: [/state/prometheus/rules.yaml]
alerting:
  alertmanagers:
  - api_version: v2
    static_configs:
    - targets: ["127.0.0.1:9093"]
scrape_configs:
- job_name: backfill-manager
  honor_labels: true
  file_sd_configs:
  - files: [/state/prometheus/managers.json]
    refresh_interval: 5s
- job_name: kubelet-resource
  honor_labels: true
  static_configs:
  - targets: ["127.0.0.1:10247"]
    labels: {__metrics_path__: /metrics/nodes/gpu-node-0/metrics/resource, node: gpu-node-0}
  - targets: ["127.0.0.1:10247"]
    labels: {__metrics_path__: /metrics/nodes/gpu-node-1/metrics/resource, node: gpu-node-1}
- job_name: dcgm-exporter
  honor_labels: false
  static_configs:
  - targets: ["127.0.0.1:9400"]
    labels: {namespace: backfill-dev, pod: gpusim, container: gpusim}
- job_name: online-latency
  honor_labels: true
  static_configs:
  - targets: ["127.0.0.1:9401"]
- job_name: prometheus
  honor_labels: false
  static_configs:
  - targets: ["127.0.0.1:9090"]
`
	if diff := cmp.Diff(decode(t, []byte(want)), decode(t, got)); diff != "" {
		t.Errorf("prometheus.yml (-want +got):\n%s\ngot:\n%s", diff, got)
	}
}

func TestConfigIsStable(t *testing.T) {
	a, err := Config(validTargets())
	if err != nil {
		t.Fatal(err)
	}
	reordered := validTargets()
	reordered.Nodes = []string{"gpu-node-0", "gpu-node-1"}
	b, err := Config(reordered)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("the file depends on the order of the nodes:\n%s\n---\n%s", a, b)
	}
}

func TestConfigWithoutNodes(t *testing.T) {
	tg := validTargets()
	tg.Nodes = nil
	out, err := Config(tg)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	var f file
	if err := yaml.UnmarshalStrict(out, &f); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	for _, job := range f.ScrapeConfigs {
		if job.JobName == JobKubeletResource && len(job.StaticConfigs) != 0 {
			t.Errorf("kubelet-resource has %d static configs without nodes, want none", len(job.StaticConfigs))
		}
	}
}

func TestConfigRejectsBadTargets(t *testing.T) {
	cases := map[string]struct {
		mutate  func(*Targets)
		wantErr string
	}{
		"missing manager address": {
			mutate: func(t *Targets) { t.ManagersFile = "" }, wantErr: "ManagersFile is empty",
		},
		"a URL instead of host:port": {
			mutate: func(t *Targets) { t.GPUSim = "http://127.0.0.1:9400" }, wantErr: "GPUSim address",
		},
		"no port": {
			mutate: func(t *Targets) { t.Kwok = "127.0.0.1" }, wantErr: "Kwok address",
		},
		"no host": {
			mutate: func(t *Targets) { t.Prometheus = ":9090" }, wantErr: "Prometheus address",
		},
		"a latency simulator without a port": {
			mutate: func(t *Targets) { t.LatencySim = "127.0.0.1" }, wantErr: "LatencySim address",
		},
		"a repeated node": {
			mutate: func(t *Targets) { t.Nodes = append(t.Nodes, "gpu-node-0") }, wantErr: `node name "gpu-node-0"`,
		},
		"an Alertmanager URL instead of host:port": {
			mutate: func(t *Targets) { t.Alertmanager = "http://127.0.0.1:9093" }, wantErr: "Alertmanager address",
		},
		"an empty rule file": {
			mutate: func(t *Targets) { t.RuleFiles = []string{""} }, wantErr: "rule file name is empty",
		},
		"an empty node name": {
			mutate: func(t *Targets) { t.Nodes = append(t.Nodes, "") }, wantErr: `node name ""`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := validTargets()
			tc.mutate(&tg)
			out, err := Config(tg)
			if err == nil {
				t.Fatalf("Config succeeded, want an error containing %q; got:\n%s", tc.wantErr, out)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TestConfigWithoutLatencySim: the latency simulator's job is left out
// when no address is given, as for a Prometheus that scrapes only the GPU
// simulator.
func TestConfigWithoutLatencySim(t *testing.T) {
	tg := validTargets()
	tg.LatencySim = ""
	out, err := Config(tg)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	var f file
	if err := yaml.UnmarshalStrict(out, &f); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	for _, job := range f.ScrapeConfigs {
		if job.JobName == JobOnlineLatency {
			t.Errorf("an %s job without a latency simulator:\n%s", JobOnlineLatency, out)
		}
	}
	if len(f.ScrapeConfigs) != 4 {
		t.Errorf("%d jobs, want the other 4:\n%s", len(f.ScrapeConfigs), out)
	}
}

// TestConfigWithoutAlerting: no Alertmanager, no alerting section.
func TestConfigWithoutAlerting(t *testing.T) {
	tg := validTargets()
	tg.Alertmanager, tg.RuleFiles = "", nil
	out, err := Config(tg)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	var f file
	if err := yaml.UnmarshalStrict(out, &f); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if f.Alerting != nil || f.RuleFiles != nil {
		t.Errorf("alerting or rule files without an Alertmanager or rules:\n%s", out)
	}
}

func decode(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("decoding YAML: %v\n%s", err, data)
	}
	return v
}

func TestManagerTargets(t *testing.T) {
	got, err := ManagerTargets([]string{"127.0.0.1:8080", "127.0.0.1:8081"})
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"targets": ["127.0.0.1:8080", "127.0.0.1:8081"],
  "labels": {"namespace": "backfill-system", "pod": "backfill-manager", "service": "backfill-manager-metrics", "container": "manager", "endpoint": "metrics"}}]`
	if diff := cmp.Diff(decode(t, []byte(want)), decode(t, got)); diff != "" {
		t.Errorf("managers file (-want +got):\n%s", diff)
	}
	if _, err := ManagerTargets([]string{"nowhere"}); err == nil {
		t.Error("an address without a port: no error")
	}
}
