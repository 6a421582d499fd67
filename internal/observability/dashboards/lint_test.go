package dashboards

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

// rateIntervalSample stands for $__rate_interval when queries are parsed:
// a window no query would write by hand, so that a range equal to it came
// from the variable.
const rateIntervalSample = 7*time.Minute + 13*time.Second

// rangeSample stands for $__range, the dashboard's time range, as
// rateIntervalSample does for $__rate_interval: a total over the range
// (increase(x[$__range]) in an instant query) is the one other window a
// query may read.
const rangeSample = 3*time.Hour + 7*time.Minute + 11*time.Second

// sampleValues are the variables' values the lint parses queries with, as
// Grafana would interpolate a multi-value selection.
var sampleValues = map[string]string{
	VarNamespace:        "ml-dev|research",
	VarTFJob:            "mnist",
	VarNode:             "node-0|node-1",
	"__rate_interval":   "7m13s",
	"__interval":        "30s",
	"__range":           "3h7m11s",
	"__range_s":         "11231",
	"__interval_ms":     "30000",
	"__scrape_interval": "30s",
}

// unknownVariable finds a Grafana variable left after substitution;
// label_replace's "$1" is not one.
var unknownVariable = regexp.MustCompile(`\$(\{[^}]*\}|[A-Za-z_]\w*)`)

// counterFunctions are the functions a counter may be read through.
var counterFunctions = map[string]bool{"rate": true, "irate": true, "increase": true}

// lint checks a dashboard's JSON as grafana's dashboard-linter does, and
// returns one line per problem.
func lint(dashboardJSON []byte) []string {
	var d lintDashboard
	if err := json.Unmarshal(dashboardJSON, &d); err != nil {
		return []string{"decoding: " + err.Error()}
	}
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if d.Editable == nil || *d.Editable {
		report("dashboard is editable: provisioned dashboards must set editable: false")
	}
	problems = append(problems, lintVariables(d.Templating.List)...)
	ids := map[int]bool{}
	for _, p := range d.allPanels() {
		problems = append(problems, lintPanel(p, ids)...)
	}
	queries, err := VariableQueriesOf(dashboardJSON)
	if err != nil {
		report("%v", err)
	}
	for _, v := range queries {
		for _, problem := range lintExpr(v.Selector) {
			report("variable %s: %s", v.Name, problem)
		}
	}
	return problems
}

type lintDashboard struct {
	Editable   *bool `json:"editable"`
	Templating struct {
		List []lintVariable `json:"list"`
	} `json:"templating"`
	Panels []lintPanelJSON `json:"panels"`
}

func (d lintDashboard) allPanels() []lintPanelJSON {
	var out []lintPanelJSON
	var walk func([]lintPanelJSON)
	walk = func(panels []lintPanelJSON) {
		for _, p := range panels {
			if p.Type != "row" {
				out = append(out, p)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

type lintVariable struct {
	Type       string      `json:"type"`
	Name       string      `json:"name"`
	Query      any         `json:"query"`
	Refresh    int         `json:"refresh"`
	Datasource *datasource `json:"datasource"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type lintPanelJSON struct {
	Type        string      `json:"type"`
	ID          int         `json:"id"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Datasource  *datasource `json:"datasource"`
	Targets     []struct {
		Datasource   *datasource `json:"datasource"`
		RefID        string      `json:"refId"`
		Expr         string      `json:"expr"`
		LegendFormat string      `json:"legendFormat"`
	} `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Options struct {
		ReduceOptions *struct {
			Calcs []string `json:"calcs"`
		} `json:"reduceOptions"`
		Legend *struct {
			ShowLegend  bool   `json:"showLegend"`
			DisplayMode string `json:"displayMode"`
		} `json:"legend"`
	} `json:"options"`
	Panels []lintPanelJSON `json:"panels"`
}

// lintVariables wants the datasource variable and every query variable on
// it, refreshed when the time range changes.
func lintVariables(vars []lintVariable) []string {
	var problems []string
	found := false
	for _, v := range vars {
		switch v.Type {
		case "datasource":
			if v.Name == VarDatasource && v.Query == "prometheus" {
				found = true
			}
		case "query":
			if v.Refresh != 2 {
				problems = append(problems, fmt.Sprintf("variable %s: refresh is %d, want 2 (on time range change)", v.Name, v.Refresh))
			}
			if !onDatasourceVariable(v.Datasource) {
				problems = append(problems, fmt.Sprintf("variable %s: datasource is %v, want ${%s}", v.Name, v.Datasource, VarDatasource))
			}
		}
	}
	if !found {
		problems = append(problems, fmt.Sprintf("no datasource variable %q of type prometheus", VarDatasource))
	}
	return problems
}

func onDatasourceVariable(ds *datasource) bool {
	return ds != nil && ds.Type == "prometheus" && (ds.UID == datasourceUID || ds.UID == "$"+VarDatasource)
}

// lintPanel checks one panel and its queries.
func lintPanel(p lintPanelJSON, ids map[int]bool) []string {
	var problems []string
	report := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("panel %d %q: ", p.ID, p.Title)+fmt.Sprintf(format, args...))
	}
	if p.ID == 0 || ids[p.ID] {
		report("id missing or repeated")
	}
	ids[p.ID] = true
	if p.Title == "" {
		report("no title")
	}
	if p.Description == "" {
		report("no description")
	}
	if p.FieldConfig.Defaults.Unit == "" {
		report("no unit")
	}
	if !onDatasourceVariable(p.Datasource) {
		report("datasource is %v, want ${%s}", p.Datasource, VarDatasource)
	}
	if p.Type == "stat" && (p.Options.ReduceOptions == nil || len(p.Options.ReduceOptions.Calcs) == 0) {
		report("stat without reduce calcs")
	}
	if p.Type == "timeseries" && (p.Options.Legend == nil || !p.Options.Legend.ShowLegend || p.Options.Legend.DisplayMode == "hidden") {
		report("time series without a legend")
	}
	if len(p.Targets) == 0 {
		report("no queries")
	}
	refIDs := map[string]bool{}
	for _, t := range p.Targets {
		if t.RefID == "" || refIDs[t.RefID] {
			report("refId %q missing or repeated", t.RefID)
		}
		refIDs[t.RefID] = true
		if !onDatasourceVariable(t.Datasource) {
			report("query %s: datasource is %v, want ${%s}", t.RefID, t.Datasource, VarDatasource)
		}
		if t.LegendFormat == "" {
			report("query %s: no legend", t.RefID)
		}
		for _, problem := range lintExpr(t.Expr) {
			report("query %s: %s", t.RefID, problem)
		}
	}
	return problems
}

// lintExpr parses a query with the sample values and checks how it reads
// counters.
func lintExpr(query string) []string {
	substituted := Substitute(query, sampleValues)
	if v := unknownVariable.FindString(substituted); v != "" {
		return []string{fmt.Sprintf("uses %s, which the dashboard does not define: %s", v, substituted)}
	}
	parsed, err := parser.NewParser(parser.Options{}).ParseExpr(substituted)
	if err != nil {
		return []string{fmt.Sprintf("does not parse (%v): %s", err, substituted)}
	}
	var problems []string
	parser.Inspect(parsed, func(node parser.Node, path []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			if isCounter(n.Name) && !insideCounterFunction(path) {
				problems = append(problems, fmt.Sprintf("counter %s outside rate, irate or increase", n.Name))
			}
		case *parser.MatrixSelector:
			if n.Range != rateIntervalSample && n.Range != rangeSample {
				problems = append(problems, fmt.Sprintf("range [%v] of %s: use $__rate_interval (or $__range for a total over the dashboard's range)", n.Range, n.VectorSelector))
			}
		}
		return nil
	})
	return problems
}

// isCounter tells counters and histogram parts by their names.
func isCounter(name string) bool {
	for _, suffix := range []string{"_total", "_count", "_sum", "_bucket"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// insideCounterFunction reports whether a selector's path passes through
// rate, irate or increase.
func insideCounterFunction(path []parser.Node) bool {
	for _, n := range path {
		if call, ok := n.(*parser.Call); ok && counterFunctions[call.Func.Name] {
			return true
		}
	}
	return false
}

// TestDashboardsLint runs the lint on every generated dashboard.
func TestDashboardsLint(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range all {
		t.Run(b.Name, func(t *testing.T) {
			out, err := ProvisionedJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, problem := range lint(out) {
				t.Error(problem)
			}
			if err := Validate(out); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
