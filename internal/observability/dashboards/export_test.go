package dashboards

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestExport checks the export variant: it asks for a datasource, names
// what it needs, turns the library panels into references whose models it
// carries, and is otherwise the provisioned dashboard.
func TestExport(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range all {
		t.Run(b.Name, func(t *testing.T) {
			out, err := ExportJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			var model map[string]any
			if err := json.Unmarshal(out, &model); err != nil {
				t.Fatal(err)
			}
			inputs, _ := model["__inputs"].([]any)
			if len(inputs) != 1 || inputs[0].(map[string]any)["name"] != exportDatasourceInput {
				t.Errorf("__inputs = %v, want the one datasource input %s", inputs, exportDatasourceInput)
			}
			if !strings.Contains(string(out), `"${DS_PROMETHEUS}"`) {
				t.Error("the datasource variable does not default to ${DS_PROMETHEUS}")
			}
			checkRequires(t, model)
			checkLibraryReferences(t, b, model)

			// Without the import-only keys, the export is a valid dashboard.
			for _, k := range []string{"__inputs", "__requires", "__elements"} {
				delete(model, k)
			}
			stripped, err := json.Marshal(model)
			if err != nil {
				t.Fatal(err)
			}
			if err := Validate(stripped); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func checkRequires(t *testing.T, model map[string]any) {
	t.Helper()
	got := map[string]bool{}
	for _, r := range model["__requires"].([]any) {
		req := r.(map[string]any)
		got[req["type"].(string)+"/"+req["id"].(string)] = true
	}
	for _, want := range []string{"grafana/grafana", "datasource/prometheus", "panel/stat", "panel/timeseries"} {
		if !got[want] {
			t.Errorf("__requires lacks %s: %v", want, got)
		}
	}
	// Rows are Grafana's own: an import that required a row plugin would
	// fail for want of one.
	if got["panel/row"] {
		t.Errorf("__requires lists rows as a panel plugin: %v", got)
	}
}

// checkLibraryReferences wants each library panel placed as a reference
// and its model in __elements equal to the provisioned panel.
func checkLibraryReferences(t *testing.T, b Built, model map[string]any) {
	t.Helper()
	provisioned, err := ProvisionedJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	var inline struct {
		Panels []map[string]any `json:"panels"`
	}
	if err := json.Unmarshal(provisioned, &inline); err != nil {
		t.Fatal(err)
	}
	elements := model["__elements"].(map[string]any)
	if len(elements) != len(b.library) {
		t.Errorf("__elements has %d library panels, want %d", len(elements), len(b.library))
	}
	panels := model["panels"].([]any)
	for _, use := range b.library {
		var ref map[string]any
		for _, p := range panels {
			if p.(map[string]any)["id"] == float64(use.panelID) {
				ref = p.(map[string]any)
			}
		}
		want := map[string]any{"name": use.panel.Name, "uid": use.panel.UID}
		if diff := cmp.Diff(want, ref["libraryPanel"]); diff != "" {
			t.Errorf("panel %d reference (-want +got):\n%s", use.panelID, diff)
		}
		element := elements[use.panel.UID].(map[string]any)["model"].(map[string]any)
		for _, p := range inline.Panels {
			if p["id"] == float64(use.panelID) {
				delete(p, "id")
				delete(p, "gridPos")
				if diff := cmp.Diff(p, element); diff != "" {
					t.Errorf("library panel %s model differs from the inline panel (-inline +element):\n%s", use.panel.UID, diff)
				}
			}
		}
	}
}

// TestConfigMaps wants one ConfigMap per dashboard, labelled for the
// sidecar and holding the provisioned JSON.
func TestConfigMaps(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(files[ConfigMapsFile]), "\n---\n")[1:]
	all, _ := All()
	if len(docs) != len(all) {
		t.Fatalf("%d ConfigMaps, want %d", len(docs), len(all))
	}
	for i, b := range all {
		var cm struct {
			Kind     string                             `json:"kind"`
			Metadata struct{ Labels map[string]string } `json:"metadata"`
			Data     map[string]string                  `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(docs[i]), &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Kind != "ConfigMap" || cm.Metadata.Labels[SidecarLabel] != "1" {
			t.Errorf("document %d: kind %s labels %v, want a ConfigMap labelled %s: \"1\"", i, cm.Kind, cm.Metadata.Labels, SidecarLabel)
		}
		if diff := cmp.Diff(string(files[ProvisionedDir+"/"+b.Name+".json"]), cm.Data[b.Name+".json"]); diff != "" {
			t.Errorf("ConfigMap of %s holds another JSON (-want +got):\n%s", b.Name, diff)
		}
	}
}
