package dashboards

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PanelQuery is one query of a dashboard's JSON, as Grafana would run it
// before interpolating variables.
type PanelQuery struct {
	PanelID    int
	PanelTitle string
	RefID      string
	Expr       string
	// Instant is an instant query (Stat and table panels), else a range
	// query.
	Instant bool
}

// VariableQuery is the query of a query variable: label_values(selector,
// label).
type VariableQuery struct {
	Name     string
	Selector string
	Label    string
}

// QueriesOf reads every panel query of a dashboard's JSON, inside rows
// too, in panel order.
func QueriesOf(dashboardJSON []byte) ([]PanelQuery, error) {
	var model struct {
		Panels []jsonPanel `json:"panels"`
	}
	if err := json.Unmarshal(dashboardJSON, &model); err != nil {
		return nil, fmt.Errorf("decoding the dashboard: %w", err)
	}
	var out []PanelQuery
	var walk func([]jsonPanel)
	walk = func(panels []jsonPanel) {
		for _, p := range panels {
			for _, t := range p.Targets {
				out = append(out, PanelQuery{PanelID: p.ID, PanelTitle: p.Title, RefID: t.RefID, Expr: t.Expr, Instant: t.Instant})
			}
			walk(p.Panels)
		}
	}
	walk(model.Panels)
	return out, nil
}

type jsonPanel struct {
	ID      int         `json:"id"`
	Title   string      `json:"title"`
	Targets []jsonQuery `json:"targets"`
	Panels  []jsonPanel `json:"panels"`
}

type jsonQuery struct {
	RefID   string `json:"refId"`
	Expr    string `json:"expr"`
	Instant bool   `json:"instant"`
}

// VariableQueriesOf reads the query variables of a dashboard's JSON.
func VariableQueriesOf(dashboardJSON []byte) ([]VariableQuery, error) {
	var model struct {
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(dashboardJSON, &model); err != nil {
		return nil, fmt.Errorf("decoding the dashboard: %w", err)
	}
	var out []VariableQuery
	for _, v := range model.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, ok := v.Query.(string)
		if !ok {
			return nil, fmt.Errorf("variable %s: query is %T, want a label_values(...) string", v.Name, v.Query)
		}
		selector, label, err := parseLabelValues(q)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		out = append(out, VariableQuery{Name: v.Name, Selector: selector, Label: label})
	}
	return out, nil
}

// parseLabelValues splits Grafana's label_values(selector, label).
func parseLabelValues(q string) (selector, label string, err error) {
	inner, ok := strings.CutPrefix(strings.TrimSpace(q), "label_values(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return "", "", fmt.Errorf("query %q is not label_values(selector, label)", q)
	}
	inner = strings.TrimSuffix(inner, ")")
	comma := strings.LastIndexByte(inner, ',')
	if comma < 0 {
		return "", "", fmt.Errorf("query %q names no label", q)
	}
	return strings.TrimSpace(inner[:comma]), strings.TrimSpace(inner[comma+1:]), nil
}
