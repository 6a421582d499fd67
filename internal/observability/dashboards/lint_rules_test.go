package dashboards

import (
	"strings"
	"testing"
)

// lintCase builds a one-panel dashboard around a panel JSON and variables.
func lintCase(panel, variables string) []byte {
	return []byte(`{"editable": false, "templating": {"list": [` + variables + `]}, "panels": [` + panel + `]}`)
}

const (
	goodDatasourceVar = `{"type": "datasource", "name": "datasource", "query": "prometheus"}`
	goodQueryVar      = `{"type": "query", "name": "namespace", "query": "label_values(backfill_tfjob_info, namespace)", "refresh": 2, "datasource": {"type": "prometheus", "uid": "${datasource}"}}`
	ds                = `"datasource": {"type": "prometheus", "uid": "${datasource}"}`
)

// statWith is a valid stat panel whose query is expr.
func statWith(expr string) string {
	return `{"type": "stat", "id": 1, "title": "T", "description": "D", ` + ds + `,
		"fieldConfig": {"defaults": {"unit": "none"}}, "options": {"reduceOptions": {"calcs": ["lastNotNull"]}},
		"targets": [{"refId": "A", "legendFormat": "x", ` + ds + `, "expr": ` + quote(expr) + `}]}`
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestLintFindsProblems proves each check fails on the mistake it is for,
// so that a clean lint of the real dashboards means something.
func TestLintFindsProblems(t *testing.T) {
	cases := map[string]struct {
		dashboard []byte
		want      string
	}{
		"valid": {
			dashboard: lintCase(statWith(`sum(rate(container_cpu_usage_seconds_total{namespace=~"$namespace"}[$__rate_interval]))`), goodDatasourceVar+","+goodQueryVar),
		},
		"total over the dashboard's range": {
			dashboard: lintCase(statWith(`round(sum(increase(backfill_gpu_loan_returns_total[$__range])))`), goodDatasourceVar),
		},
		"editable": {
			dashboard: []byte(`{"editable": true, "templating": {"list": [` + goodDatasourceVar + `]}, "panels": [` + statWith("up") + `]}`),
			want:      "editable",
		},
		"no datasource variable": {
			dashboard: lintCase(statWith("up"), ""),
			want:      `no datasource variable "datasource"`,
		},
		"variable refreshed on load only": {
			dashboard: lintCase(statWith("up"), goodDatasourceVar+","+strings.Replace(goodQueryVar, `"refresh": 2`, `"refresh": 1`, 1)),
			want:      "refresh is 1",
		},
		"variable query does not parse": {
			dashboard: lintCase(statWith("up"), goodDatasourceVar+","+strings.Replace(goodQueryVar, "backfill_tfjob_info,", "backfill_tfjob_info{,", 1)),
			want:      "variable namespace: does not parse",
		},
		"fixed datasource uid": {
			dashboard: lintCase(strings.Replace(statWith("up"), "${datasource}", "P1809F7CD0C75ACF3", 1), goodDatasourceVar),
			want:      "datasource is",
		},
		"no unit": {
			dashboard: lintCase(strings.Replace(statWith("up"), `"unit": "none"`, `"unit": ""`, 1), goodDatasourceVar),
			want:      "no unit",
		},
		"no description": {
			dashboard: lintCase(strings.Replace(statWith("up"), `"description": "D"`, `"description": ""`, 1), goodDatasourceVar),
			want:      "no description",
		},
		"no title": {
			dashboard: lintCase(strings.Replace(statWith("up"), `"title": "T"`, `"title": ""`, 1), goodDatasourceVar),
			want:      "no title",
		},
		"stat without calcs": {
			dashboard: lintCase(strings.Replace(statWith("up"), `["lastNotNull"]`, `[]`, 1), goodDatasourceVar),
			want:      "stat without reduce calcs",
		},
		"no legend": {
			dashboard: lintCase(strings.Replace(statWith("up"), `"legendFormat": "x"`, `"legendFormat": ""`, 1), goodDatasourceVar),
			want:      "no legend",
		},
		"does not parse": {
			dashboard: lintCase(statWith(`sum(rate(x_total[$__rate_interval])`), goodDatasourceVar),
			want:      "does not parse",
		},
		"unknown variable": {
			dashboard: lintCase(statWith(`up{cluster="$cluster"}`), goodDatasourceVar),
			want:      "uses $cluster, which the dashboard does not define",
		},
		"counter without rate": {
			dashboard: lintCase(statWith(`sum(container_cpu_usage_seconds_total)`), goodDatasourceVar),
			want:      "counter container_cpu_usage_seconds_total outside rate",
		},
		"histogram bucket without rate": {
			dashboard: lintCase(statWith(`histogram_quantile(0.9, sum by (le) (backfill_tfjob_time_to_running_seconds_bucket))`), goodDatasourceVar),
			want:      "counter backfill_tfjob_time_to_running_seconds_bucket outside rate",
		},
		"fixed rate window": {
			dashboard: lintCase(statWith(`sum(rate(container_cpu_usage_seconds_total[5m]))`), goodDatasourceVar),
			want:      "use $__rate_interval",
		},
		"repeated refId": {
			dashboard: lintCase(strings.Replace(statWith("up"), `"targets": [`, `"targets": [{"refId": "A", "legendFormat": "y", `+ds+`, "expr": "up"},`, 1), goodDatasourceVar),
			want:      `refId "A" missing or repeated`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			problems := lint(tc.dashboard)
			if tc.want == "" {
				if len(problems) > 0 {
					t.Errorf("lint found %q in a valid dashboard", problems)
				}
				return
			}
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Errorf("lint found %q, want a problem containing %q", problems, tc.want)
			}
		})
	}
}
