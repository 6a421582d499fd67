package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestEveryQueryDocumented wants docs/observability.md's "Every query" to
// list each panel of each dashboard, and each of its queries with its
// legend, as the generated JSON holds them: the doc is where a reader
// copies a panel's PromQL from, so it must not drift from the dashboards.
// Rows hold no query; the panels of a collapsed one count as the others.
func TestEveryQueryDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range all {
		out, err := ProvisionedJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		var model struct {
			Panels []docPanel `json:"panels"`
		}
		if err := json.Unmarshal(out, &model); err != nil {
			t.Fatal(err)
		}
		for _, p := range docPanels(model.Panels) {
			head := fmt.Sprintf("- **%s** (%s, unit `%s`, id %d)", p.Title, p.Type, p.FieldConfig.Defaults.Unit, p.ID)
			if !strings.Contains(string(doc), head+"\n") {
				t.Errorf("docs/observability.md lacks the line\n%s", head)
			}
			for _, q := range p.Targets {
				line := fmt.Sprintf("  - %s `%s`: `%s`", q.RefID, q.LegendFormat, q.Expr)
				if !strings.Contains(string(doc), line+"\n") {
					t.Errorf("docs/observability.md lacks %s panel %q query %s:\n%s", b.Name, p.Title, q.RefID, line)
				}
			}
		}
	}
}

// docPanel is what the doc says of a panel.
type docPanel struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		RefID        string `json:"refId"`
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
	Panels []docPanel `json:"panels"`
}

// docPanels are the panels in dashboard order, those of collapsed rows
// included, without the rows.
func docPanels(panels []docPanel) []docPanel {
	var out []docPanel
	for _, p := range panels {
		if p.Type != "row" {
			out = append(out, p)
		}
		out = append(out, docPanels(p.Panels)...)
	}
	return out
}
