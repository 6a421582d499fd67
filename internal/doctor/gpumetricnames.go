package doctor

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// gpuNamesDoc is where the whole table of renames is explained.
const gpuNamesDoc = "docs/observability.md#gpu-metric-names"

// checkGPUMetricNames looks through every PrometheusRule's expr and every
// Grafana dashboard ConfigMap's queries for GPU metric names no exporter
// emits (gpuMetricRenames): a rule on such a name never fires, a panel
// on one shows No data, and nothing says so. Each object that queries one
// is a WARN naming where, the name and the dcgm-exporter name to use; a
// list doctor was refused is a SKIP that says which grant it needs.
func checkGPUMetricNames(s *Snapshot) []Result {
	rulesRefused, dashboardsRefused := s.Forbidden[readPrometheusRules], s.Forbidden[readDashboards]
	if rulesRefused && dashboardsRefused {
		return []Result{gpuNamesSkip(readPrometheusRules, readDashboards)}
	}
	if dashboardsRefused && !s.GPUQueries.RulesServed {
		// Nothing to read but what was refused: no OK for a scan of
		// nothing.
		return []Result{gpuNamesSkip(readDashboards)}
	}
	var out []Result
	if !rulesRefused {
		for i := range s.GPUQueries.Rules {
			rule := &s.GPUQueries.Rules[i]
			spec, _ := rule.Object["spec"].(map[string]any)
			if uses := gpuNamesInRule(spec); len(uses) > 0 {
				ref := rule.GetNamespace() + "/" + rule.GetName()
				out = append(out, gpuNamesWarn("prometheusrule "+ref,
					"PrometheusRule "+ref+" queries GPU metric names no exporter emits, so its alerts never fire and its recorded series stay empty", uses,
					"kubectl -n "+rule.GetNamespace()+" edit prometheusrule "+rule.GetName()))
			}
		}
	}
	if !dashboardsRefused {
		for i := range s.GPUQueries.Dashboards {
			cm := &s.GPUQueries.Dashboards[i]
			if uses := gpuNamesInDashboards(cm.Data); len(uses) > 0 {
				ref := cm.Namespace + "/" + cm.Name
				out = append(out, gpuNamesWarn("configmap "+ref,
					"Grafana dashboard ConfigMap "+ref+" queries GPU metric names no exporter emits, so those panels show No data", uses,
					"kubectl -n "+cm.Namespace+" edit configmap "+cm.Name+" (or the file it is generated from)"))
			}
		}
	}
	if len(out) == 0 {
		out = append(out, ok(CheckGPUMetricNames, "no PrometheusRule or Grafana dashboard queries a GPU metric name no exporter emits ("+gpuNamesScanned(s)+")"))
	}
	if rulesRefused {
		out = append(out, gpuNamesSkip(readPrometheusRules))
	}
	if dashboardsRefused {
		out = append(out, gpuNamesSkip(readDashboards))
	}
	return out
}

// gpuNamesInDashboards are the old names the dashboards of a ConfigMap's
// keys query, each place prefixed with its key; values that are not JSON
// are no dashboards.
func gpuNamesInDashboards(data map[string]string) []gpuNameUse {
	var uses []gpuNameUse
	for _, key := range slices.Sorted(maps.Keys(data)) {
		found, _ := gpuNamesInDashboard(data[key])
		for _, u := range found {
			uses = append(uses, gpuNameUse{Where: key + ", " + u.Where, Name: u.Name})
		}
	}
	return uses
}

// gpuNamesWarn is the WARN of one object: each old name it queries, where,
// and what to query instead.
func gpuNamesWarn(object, what string, uses []gpuNameUse, edit string) Result {
	var names []string
	places := map[string][]string{}
	for _, u := range uses {
		if !slices.Contains(names, u.Name) {
			names = append(names, u.Name)
		}
		if !slices.Contains(places[u.Name], u.Where) {
			places[u.Name] = append(places[u.Name], u.Where)
		}
	}
	renames := make([]string, 0, len(names))
	for _, name := range names {
		r, _ := renameOf(name)
		renames = append(renames, fmt.Sprintf("%s (in %s): use %s (%s; %s)", name, listNames(places[name]), r.DCGM, r.Unit, r.Note))
	}
	return Result{Check: CheckGPUMetricNames, Status: StatusWarn, Object: object,
		Finding: what + ": " + strings.Join(renames, "; "),
		Fix:     "rewrite the queries with dcgm-exporter's names (" + gpuNamesDoc + " has them all, with their units): " + edit + "; " + dcgmLabels}
}

// gpuNamesSkip says which lists doctor was refused and the grant it needs.
func gpuNamesSkip(refused ...string) Result {
	return Result{Check: CheckGPUMetricNames, Status: StatusSkip,
		Finding: fmt.Sprintf("cannot read %s, so the GPU metric names they query were not checked", strings.Join(refused, " or ")),
		Fix:     clusterViewFix(strings.Join(refused, " and "))}
}

// gpuNamesScanned says what the check read.
func gpuNamesScanned(s *Snapshot) string {
	var scanned []string
	if s.GPUQueries.RulesServed && !s.Forbidden[readPrometheusRules] {
		scanned = append(scanned, fmt.Sprintf("%d PrometheusRule(s)", len(s.GPUQueries.Rules)))
	}
	if !s.Forbidden[readDashboards] {
		scanned = append(scanned, fmt.Sprintf("%d ConfigMap(s) labelled %s", len(s.GPUQueries.Dashboards), GrafanaDashboardLabel))
	}
	out := "scanned " + strings.Join(scanned, " and ")
	if !s.GPUQueries.RulesServed {
		out += "; the cluster serves no PrometheusRules"
	}
	return out
}
