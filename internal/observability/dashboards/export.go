package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// exportDatasourceInput is the datasource Grafana asks for when a user
// imports the export variant by hand; the datasource variable defaults to
// the one chosen.
const exportDatasourceInput = "DS_PROMETHEUS"

// libraryPanelKind is Grafana's element kind of a library panel in
// __elements.
const libraryPanelKind = 1

// grafanaVersion is the oldest Grafana the export declares it needs:
// schemaVersion 42 dashboards and the merge/organize transformations.
const grafanaVersion = "11.0.0"

// ProvisionedJSON is the dashboard as Grafana's provisioning and the
// kube-prometheus-stack sidecar load it: read-only, library panels inline.
func ProvisionedJSON(b Built) ([]byte, error) {
	out, err := json.MarshalIndent(b.Dashboard, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding dashboard %s: %w", b.Name, err)
	}
	return append(out, '\n'), nil
}

// ExportJSON is the dashboard for import by hand (Dashboards > New >
// Import): with __inputs asking for the Prometheus datasource, __requires
// naming the plugins, and the library panels as references whose models
// travel in __elements, so that the import creates them.
func ExportJSON(b Built) ([]byte, error) {
	provisioned, err := ProvisionedJSON(b)
	if err != nil {
		return nil, err
	}
	var model map[string]any
	dec := json.NewDecoder(bytes.NewReader(provisioned))
	dec.UseNumber()
	if err := dec.Decode(&model); err != nil {
		return nil, fmt.Errorf("decoding dashboard %s: %w", b.Name, err)
	}
	elements, err := referenceLibraryPanels(model, b.library)
	if err != nil {
		return nil, fmt.Errorf("dashboard %s: %w", b.Name, err)
	}
	model["__elements"] = elements
	model["__inputs"] = []map[string]any{{
		"name":        exportDatasourceInput,
		"label":       "Prometheus",
		"description": "The Prometheus that scrapes backfill, the kubelet and dcgm-exporter.",
		"type":        "datasource",
		"pluginId":    "prometheus",
		"pluginName":  "Prometheus",
	}}
	model["__requires"] = requires(model)
	defaultDatasourceToInput(model)
	out, err := json.MarshalIndent(model, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding export of %s: %w", b.Name, err)
	}
	return append(out, '\n'), nil
}

// referenceLibraryPanels replaces each library panel of the model by a
// reference to it and returns their models by uid.
func referenceLibraryPanels(model map[string]any, uses []libraryUse) (map[string]any, error) {
	elements := map[string]any{}
	panels, _ := model["panels"].([]any)
	for _, use := range uses {
		found := false
		for i, p := range panels {
			panel, _ := p.(map[string]any)
			if fmt.Sprint(panel["id"]) != fmt.Sprint(use.panelID) {
				continue
			}
			found = true
			libModel := map[string]any{}
			for k, v := range panel {
				if k != "id" && k != "gridPos" {
					libModel[k] = v
				}
			}
			ref := map[string]any{"name": use.panel.Name, "uid": use.panel.UID}
			elements[use.panel.UID] = map[string]any{
				"name": use.panel.Name, "uid": use.panel.UID, "kind": libraryPanelKind, "model": libModel,
			}
			panels[i] = map[string]any{"id": panel["id"], "type": panel["type"], "gridPos": panel["gridPos"], "title": panel["title"], "libraryPanel": ref}
		}
		if !found {
			return nil, fmt.Errorf("library panel %s placed as panel %d, which the dashboard lacks", use.panel.UID, use.panelID)
		}
	}
	return elements, nil
}

// requires lists Grafana, the Prometheus datasource and every panel type
// the dashboard uses, library panels included; a row is Grafana's own,
// no panel plugin.
func requires(model map[string]any) []map[string]any {
	types := map[string]bool{}
	panels, _ := model["panels"].([]any)
	for _, p := range panels {
		if t, ok := p.(map[string]any)["type"].(string); ok && t != "row" {
			types[t] = true
		}
	}
	elements, _ := model["__elements"].(map[string]any)
	for _, e := range elements {
		if t, ok := e.(map[string]any)["model"].(map[string]any)["type"].(string); ok {
			types[t] = true
		}
	}
	out := []map[string]any{
		{"type": "grafana", "id": "grafana", "name": "Grafana", "version": grafanaVersion},
		{"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
	}
	names := make([]string, 0, len(types))
	for t := range types {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		out = append(out, map[string]any{"type": "panel", "id": t, "name": t, "version": ""})
	}
	return out
}

// defaultDatasourceToInput makes the datasource variable default to the
// datasource chosen on import; panels keep using the variable.
func defaultDatasourceToInput(model map[string]any) {
	templating, _ := model["templating"].(map[string]any)
	list, _ := templating["list"].([]any)
	for _, v := range list {
		variable, _ := v.(map[string]any)
		if variable["name"] == VarDatasource {
			input := "${" + exportDatasourceInput + "}"
			variable["current"] = map[string]any{"text": input, "value": input}
		}
	}
}
