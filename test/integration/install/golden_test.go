//go:build integration

package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
			got := string(helmTemplate(t, vs))
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
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := []string{"template", "backfill", chartDir(), "--namespace", namespace}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			out, err := framework.Helm(args...)
			if err == nil {
				t.Fatalf("helm %s rendered:\n%s\nwant a refusal", strings.Join(args, " "), out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm %s: %v\nwant an error containing %q", strings.Join(args, " "), err, tc.want)
			}
			if len(out) != 0 {
				t.Errorf("A refused rendering printed:\n%s", out)
			}
		})
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
