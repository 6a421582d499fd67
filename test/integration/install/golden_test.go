//go:build integration

package install

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/test/framework"
)

// helm lint --strict passes for every value set.
func TestHelmLint(t *testing.T) {
	for name, vs := range valueSets {
		t.Run(name, func(t *testing.T) {
			args := []string{"lint", "--strict", chartFor(t, vs), "--namespace", namespace,
				"--values", filepath.Join("testdata", "values", vs.values)}
			out, err := framework.Helm(args...)
			if err != nil {
				t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			if !strings.Contains(string(out), "0 chart(s) failed") {
				t.Errorf("helm lint output:\n%s\nwant 0 chart(s) failed", out)
			}
		})
	}
}

// helm template renders each value set exactly as its golden file under
// testdata/golden; -update rewrites them.
func TestHelmTemplateGolden(t *testing.T) {
	for name, vs := range valueSets {
		t.Run(name, func(t *testing.T) {
			got := withoutGeneratedKeys(string(helmTemplate(t, vs)))
			// A copied chart's temporary path shows in no output, but say
			// so if it ever does rather than write it into a golden file.
			if strings.Contains(got, os.TempDir()) {
				t.Fatalf("The rendering contains a temporary path:\n%s", got)
			}
			path := filepath.Join("testdata", "golden", name+".yaml")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("Reading the golden file (run with -update to write it): %v", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("helm template with %s differs from %s (-golden +rendered); if the change is intended, run with -update:\n%s", vs.values, path, diff)
			}
		})
	}
}

// generatedKey is a key of the report endpoint's Secret, which the chart
// makes anew on each render.
var generatedKey = regexp.MustCompile(`(?m)^(  (?:tls\.crt|tls\.key|ca\.crt): ).+$`)

// withoutGeneratedKeys stands a placeholder for the generated keys, which
// TestReportCertificate checks.
func withoutGeneratedKeys(manifest string) string {
	return generatedKey.ReplaceAllString(manifest, "${1}<generated>")
}

// The Deployment of every value set, and of config/default, passes the
// manager only flags it has, each of its type, among them every
// --reclaim-* and --gpu-loan* flag, so that a misspelt or mistyped flag fails here rather
// than in a crash-looping pod.
func TestChartFlagsAreManagerFlags(t *testing.T) {
	renderings := map[string]func(t *testing.T) []byte{
		"kustomize config/default": func(t *testing.T) []byte {
			return kustomize(t, filepath.Join(framework.RepoRoot(), "config", "default"))
		},
	}
	for name, vs := range valueSets {
		renderings["chart "+name] = func(t *testing.T) []byte { return helmTemplate(t, vs) }
	}
	for name, render := range renderings {
		t.Run(name, func(t *testing.T) {
			args := managerArgs(t, decode(t, render(t)))
			if len(args) == 0 || args[0] != "manager" {
				t.Fatalf("The manager container's args are %q, want `manager` first", args)
			}
			flags := manager.NewCommand().Flags()
			if err := flags.Parse(args[1:]); err != nil {
				t.Fatalf("backfill manager %s: %v", strings.Join(args[1:], " "), err)
			}
			for _, f := range []string{"reclaim", "reclaim-usage-source", "prometheus-rate-window",
				"reclaim-cpu-margin", "reclaim-memory-margin", "reclaim-cpu-eviction-margin", "reclaim-memory-eviction-margin",
				"reclaim-cpu-eviction-delay", "reclaim-window", "reclaim-interval", "reclaim-growth-per-minute",
				"reclaim-min-change", "reclaim-cooldown", "reclaim-stale-after",
				"reclaim-online-cpu-wait", "reclaim-online-step", "reclaim-online-evict-after", "reclaim-online-recover-after",
				"gpu-loans", "gpu-loan-interval", "gpu-loan-checkpoint-time", "gpu-loan-warm-up", "gpu-loan-lead", "gpu-loan-min-loan"} {
				if !flags.Changed(f) {
					t.Errorf("--%s is not passed to the manager", f)
				}
			}
		})
	}
}

// installOnly are the flags only an install can set: where its report
// endpoint's Service and certificate are. The manager leaves reports off
// without them.
var installOnly = map[string]bool{"report-bind-address": true, "report-cert-dir": true, "report-url": true}

// With its default values the chart, and config/default, pass the manager
// its own defaults, so that an install behaves as `backfill manager` with
// no flags documents; reports are on, where installOnly says.
func TestChartDefaultsAreManagerDefaults(t *testing.T) {
	renderings := map[string][]byte{
		"chart default":            helmTemplate(t, valueSets["default"]),
		"kustomize config/default": kustomize(t, filepath.Join(framework.RepoRoot(), "config", "default")),
	}
	for name, rendered := range renderings {
		t.Run(name, func(t *testing.T) {
			args := managerArgs(t, decode(t, rendered))
			flags := manager.NewCommand().Flags()
			if err := flags.Parse(args[1:]); err != nil {
				t.Fatalf("backfill manager %s: %v", strings.Join(args[1:], " "), err)
			}
			flags.Visit(func(f *pflag.Flag) {
				if got := f.Value.String(); got != f.DefValue && !installOnly[f.Name] {
					t.Errorf("--%s=%s, but the manager's default is %s: change the chart's default (values.yaml, docs/install.md, config/manager/manager.yaml) to match", f.Name, got, f.DefValue)
				}
			})
		})
	}
}

// managerArgs are the args of the manager container of the Deployment.
func managerArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if c, ok := c.(map[string]any); ok && c["name"] == "manager" {
				args, _, err := unstructured.NestedStringSlice(c, "args")
				if err != nil {
					t.Fatalf("The manager container's args: %v", err)
				}
				return args
			}
		}
	}
	t.Fatal("No Deployment with a manager container rendered")
	return nil
}

// Values that cannot work are refused with one line that says what is
// wrong and how to fix it, and nothing is rendered.
func TestChartRefusesBadValues(t *testing.T) {
	tests := map[string]struct {
		set  []string
		want string
	}{
		"offline priority above online pods": {
			set:  []string{"offlinePriorityClass.value=100"},
			want: "offlinePriorityClass.value=100: must be below 0",
		},
		"offline priority of zero": {
			set:  []string{"offlinePriorityClass.value=0"},
			want: "offlinePriorityClass.value=0: must be below 0",
		},
		"both monitors": {
			set:  []string{"monitoring.serviceMonitor.enabled=true", "monitoring.podMonitor.enabled=true"},
			want: "enable one of them",
		},
		"same port twice": {
			set:  []string{"manager.healthPort=8080"},
			want: "manager.metricsPort and manager.healthPort are both 8080",
		},
		"misspelt key": {
			set:  []string{"replicas=2"},
			want: "additional properties 'replicas' not allowed",
		},
		"unknown clean pod policy": {
			set:  []string{"manager.defaultCleanPodPolicy=Sometimes"},
			want: "at '/manager/defaultCleanPodPolicy': value must be one of 'All', 'Running', 'None'",
		},
		"unknown log format": {
			set:  []string{"manager.logFormat=xml"},
			want: "at '/manager/logFormat': value must be one of 'json', 'text'",
		},
		"no replicas": {
			set:  []string{"replicaCount=0"},
			want: "at '/replicaCount'",
		},
		"reclaim margin above 99 percent": {
			set:  []string{"reclaim.cpuMargin=120"},
			want: "at '/reclaim/cpuMargin': maximum: got 120, want 99",
		},
		"reclaim window of 0": {
			set:  []string{"reclaim.window=0s"},
			want: "at '/reclaim/window': '0s' does not match pattern",
		},
		"reclaim interval of 0": {
			set:  []string{"reclaim.interval=0s"},
			want: "at '/reclaim/interval': '0s' does not match pattern",
		},
		"negative reclaim cooldown": {
			set:  []string{"reclaim.cooldown=-1m"},
			want: "at '/reclaim/cooldown': '-1m' does not match pattern",
		},
		"reclaim growth of 0": {
			set:  []string{"reclaim.growthPerMinute=0"},
			want: "at '/reclaim/growthPerMinute': minimum: got 0, want 1",
		},
		"reclaim min change above 50 percent": {
			set:  []string{"reclaim.minChange=51"},
			want: "at '/reclaim/minChange': maximum: got 51, want 50",
		},
		"unknown usage source": {
			set:  []string{"reclaim.usageSource=bogus"},
			want: "at '/reclaim/usageSource': value must be one of 'metrics-api', 'prometheus'",
		},
		"prometheus usage source without its URL": {
			set:  []string{"reclaim.usageSource=prometheus"},
			want: "at '/reclaim/prometheusURL': '' does not match pattern '^https?://'",
		},
		"prometheus URL without a scheme": {
			set:  []string{"reclaim.usageSource=prometheus", "reclaim.prometheusURL=prometheus-operated:9090"},
			want: "at '/reclaim/prometheusURL': 'prometheus-operated:9090' does not match pattern",
		},
		"prometheus usage source without the co-location metrics": {
			set:  []string{"reclaim.usageSource=prometheus", "reclaim.prometheusURL=http://prometheus-operated.monitoring:9090", "manager.colocationMetrics=false"},
			want: "reclaim.usageSource=prometheus needs manager.colocationMetrics=true",
		},
		"prometheus rate window under a second": {
			set:  []string{"reclaim.usageSource=prometheus", "reclaim.prometheusURL=http://prometheus-operated.monitoring:9090", "reclaim.prometheusRateWindow=500ms"},
			want: "reclaim.prometheusRateWindow=500ms: must be at least 1s",
		},
		"online window under a second": {
			set:  []string{"reclaim.onlineWindow=500ms"},
			want: "reclaim.onlineWindow=500ms: must be at least 1s",
		},
		"online window not shorter than evict-after": {
			set:  []string{"reclaim.onlineEvictAfter=1m"},
			want: "reclaim.onlineWindow=1m is not shorter than reclaim.onlineEvictAfter=1m",
		},
		"cpu eviction margin above the cpu margin": {
			set:  []string{"reclaim.cpuEvictionMargin=15"},
			want: "reclaim.cpuEvictionMargin=15: must be at most reclaim.cpuMargin (10)",
		},
		"memory eviction margin above the memory margin": {
			set:  []string{"reclaim.memoryMargin=4"},
			want: "reclaim.memoryEvictionMargin=5: must be at most reclaim.memoryMargin (4)",
		},
		"reclaim window shorter than the interval": {
			set:  []string{"reclaim.window=1m", "reclaim.interval=90s"},
			want: "reclaim.window=1m: must be at least reclaim.interval (90s)",
		},
		"cpu eviction delay beyond the window": {
			set:  []string{"reclaim.cpuEvictionDelay=1h"},
			want: "reclaim.cpuEvictionDelay=1h: must be at most reclaim.window (15m)",
		},
		"reclaim stale after shorter than the interval": {
			set:  []string{"reclaim.staleAfter=10s"},
			want: "reclaim.staleAfter=10s: must be at least reclaim.interval (15s)",
		},
		"another negative kubeAPIQPS": {
			set:  []string{"manager.kubeAPIQPS=-2"},
			want: "at '/manager/kubeAPIQPS'",
		},
		"kubeAPIBurst below kubeAPIQPS": {
			set:  []string{"manager.kubeAPIQPS=500"},
			want: "manager.kubeAPIBurst=400 is below manager.kubeAPIQPS=500",
		},
		"too many workers": {
			set:  []string{"manager.workers=1001"},
			want: "at '/manager/workers': maximum: got 1,001, want 1,000",
		},
		"FlowSchema after service-accounts": {
			set:  []string{"flowControl.matchingPrecedence=9000"},
			want: "at '/flowControl/matchingPrecedence': maximum: got 9,000, want 8,999",
		},
		"no concurrency shares": {
			set:  []string{"flowControl.nominalConcurrencyShares=0"},
			want: "at '/flowControl/nominalConcurrencyShares': minimum: got 0, want 1",
		},
		"misspelt reclaim key": {
			set:  []string{"reclaim.margin=10"},
			want: "additional properties 'margin' not allowed",
		},
		"node agent floor above its threshold": {
			set:  []string{"nodeAgent.cpuFloor=90"},
			want: "nodeAgent.cpuFloor=90: must be at most nodeAgent.cpuThreshold (85)",
		},
		"node agent band as wide as its activation": {
			set:  []string{"nodeAgent.cpuActivationBand=40"},
			want: "nodeAgent.cpuActivationBand=40: must be below nodeAgent.cpuActivation (40)",
		},
		"node agent release ticks above 600": {
			set:  []string{"nodeAgent.cpuReleaseTicks=601"},
			want: "at '/nodeAgent/cpuReleaseTicks': maximum: got 601, want 600",
		},
		"node agent threshold of 0": {
			set:  []string{"nodeAgent.cpuThreshold=0"},
			want: "at '/nodeAgent/cpuThreshold': minimum: got 0, want 1",
		},
		"node agent threshold above 100 percent": {
			set:  []string{"nodeAgent.cpuThreshold=101"},
			want: "at '/nodeAgent/cpuThreshold': maximum: got 101, want 100",
		},
		"node agent growth of 0": {
			set:  []string{"nodeAgent.cpuGrowth=0"},
			want: "at '/nodeAgent/cpuGrowth': minimum: got 0, want 1",
		},
		"node agent memory threshold of 5 percent": {
			set:  []string{"nodeAgent.memoryThreshold=5"},
			want: "at '/nodeAgent/memoryThreshold'",
		},
		"node agent interval under 100ms": {
			set:  []string{"nodeAgent.interval=50ms"},
			want: "nodeAgent.interval=50ms: must be from 100ms to 1m",
		},
		"node agent interval above a minute": {
			set:  []string{"nodeAgent.interval=2m"},
			want: "nodeAgent.interval=2m: must be from 100ms to 1m",
		},
		"node agent interval of 0": {
			set:  []string{"nodeAgent.interval=0s"},
			want: "at '/nodeAgent/interval': '0s' does not match pattern",
		},
		"node agent in the manager's namespace": {
			set:  []string{"nodeAgent.namespace.name=backfill-system"},
			want: "nodeAgent.namespace.name=backfill-system is the release's namespace: the node agent needs the privileged Pod Security level",
		},
		"node agent cgroup root not absolute": {
			set:  []string{"nodeAgent.kubeletCgroupRoot=kubelet"},
			want: "at '/nodeAgent/kubeletCgroupRoot': 'kubelet' does not match pattern",
		},
		"misspelt node agent key": {
			set:  []string{"nodeAgent.threshold=80"},
			want: "additional properties 'threshold' not allowed",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { checkRefused(t, tc.set, tc.want) })
	}
}

// checkRefused renders the chart with the values set and checks that helm
// refuses it with an error containing want, printing nothing.
func checkRefused(t *testing.T, set []string, want string) {
	t.Helper()
	args := []string{"template", "backfill", chartDir(), "--namespace", namespace}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := framework.Helm(args...)
	if err == nil {
		t.Fatalf("helm %s rendered:\n%s\nwant a refusal", strings.Join(args, " "), out)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("helm %s: %v\nwant an error containing %q", strings.Join(args, " "), err, want)
	}
	if len(out) != 0 {
		t.Errorf("A refused rendering printed:\n%s", out)
	}
}

// With the monitoring objects on and no generated files in the chart,
// helm says which file is missing and how to make it, rather than
// rendering an empty PrometheusRule or no dashboards.
func TestChartWithoutGeneratedFiles(t *testing.T) {
	chart := chartWithFiles(t, "")
	tests := map[string]struct {
		set  string
		want string
	}{
		"rules":      {set: "monitoring.prometheusRule.enabled=true", want: "the chart has no files/backfill.rules.yaml; run `make generate`"},
		"dashboards": {set: "monitoring.dashboards.enabled=true", want: "the chart has no files/dashboards/*.json; run `make generate`"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := framework.Helm("template", "backfill", chart, "--namespace", namespace, "--set", tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template --set %s without files/: %v\nwant an error containing %q", tc.set, err, tc.want)
			}
		})
	}
	if _, err := framework.Helm("template", "backfill", chart, "--namespace", namespace); err != nil {
		t.Errorf("helm template with the defaults needs no generated file, but: %v", err)
	}
}
