package doctor

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// gpuNameUse is one query that names a metric of gpuMetricRenames.
type gpuNameUse struct {
	// Where names the query in its object: a rule, a panel, a variable.
	Where string
	// Name is the old metric name it queries.
	Name string
}

// oldGPUNamesIn are the names of gpuMetricRenames that query uses as
// whole identifiers, in the order they first appear. A small tokenizer
// rather than the PromQL parser: dashboards' queries hold Grafana
// variables ($__rate_interval, ${node}) and functions (label_values) that
// are not PromQL. It skips comments and Grafana variables, and reads a
// quoted string as a name only when it is one whole (a __name__ matcher).
func oldGPUNamesIn(query string) []string {
	var found []string
	add := func(name string) {
		if _, ok := renameOf(name); ok && !slices.Contains(found, name) {
			found = append(found, name)
		}
	}
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '#':
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				return found
			}
			i += end
		case c == '"' || c == '\'' || c == '`':
			s, next := quoted(query, i)
			add(s)
			i = next
		case c == '$':
			// A Grafana variable: $name or ${name}; its name is not a metric.
			i++
			if i < len(query) && query[i] == '{' {
				if end := strings.IndexByte(query[i:], '}'); end >= 0 {
					i += end + 1
				}
				continue
			}
			for i < len(query) && isIdentByte(query[i]) {
				i++
			}
		case isIdentStart(c):
			start := i
			for i < len(query) && isIdentByte(query[i]) {
				i++
			}
			add(query[start:i])
		case c >= '0' && c <= '9':
			// A number or duration (1e3, 5m, 0x1f): not a name.
			for i < len(query) && isIdentByte(query[i]) {
				i++
			}
		default:
			i++
		}
	}
	return found
}

// quoted is the text of the string that opens at query[i] and the index
// after it; a backslash escapes the next byte, except in backquotes.
func quoted(query string, i int) (string, int) {
	quote := query[i]
	var b strings.Builder
	for j := i + 1; j < len(query); j++ {
		switch {
		case query[j] == quote:
			return b.String(), j + 1
		case query[j] == '\\' && quote != '`' && j+1 < len(query):
			j++
		}
		b.WriteByte(query[j])
	}
	return b.String(), len(query)
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9')
}

// gpuNamesInRule are the old names a PrometheusRule's rules query: the
// expr of every rule of spec.groups, each named by its group and its
// alert or record name.
func gpuNamesInRule(spec map[string]any) []gpuNameUse {
	var uses []gpuNameUse
	groups, _ := spec["groups"].([]any)
	for _, g := range groups {
		group, _ := g.(map[string]any)
		groupName, _ := group["name"].(string)
		rules, _ := group["rules"].([]any)
		for i, r := range rules {
			rule, _ := r.(map[string]any)
			where := fmt.Sprintf("group %s, rule %d", groupName, i+1)
			if name, ok := rule["alert"].(string); ok {
				where = "alert " + name
			} else if name, ok := rule["record"].(string); ok {
				where = "recording rule " + name
			}
			expr := rule["expr"]
			if expr == nil {
				continue
			}
			// expr is a string, or an int-or-string holding a number.
			for _, name := range oldGPUNamesIn(fmt.Sprint(expr)) {
				uses = append(uses, gpuNameUse{Where: where, Name: name})
			}
		}
	}
	return uses
}

// gpuNamesInDashboard are the old names a Grafana dashboard's JSON
// queries: every "expr" at any depth (panels, rows' panels, library
// panels' models), each named by its panel's title, and the queries of
// its template variables. ok is false when text is not a JSON object.
func gpuNamesInDashboard(text string) (uses []gpuNameUse, ok bool) {
	var dashboard map[string]any
	if err := json.Unmarshal([]byte(text), &dashboard); err != nil {
		return nil, false
	}
	seen := map[gpuNameUse]bool{}
	add := func(where, query string) {
		for _, name := range oldGPUNamesIn(query) {
			u := gpuNameUse{Where: where, Name: name}
			if !seen[u] {
				seen[u] = true
				uses = append(uses, u)
			}
		}
	}
	walkDashboard(dashboard, "dashboard", add)
	return uses, true
}

// walkDashboard calls add with every query under v and the place it
// belongs to: the closest enclosing panel (an item of a "panels" list, or
// of an old dashboard's "rows"), else where.
func walkDashboard(v any, where string, add func(where, query string)) {
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			walkDashboard(item, where, add)
		}
	case map[string]any:
		for _, key := range slices.Sorted(maps.Keys(v)) {
			switch child := v[key]; key {
			case "expr":
				if query, ok := child.(string); ok {
					add(where, query)
				}
			case "templating":
				walkVariables(child, add)
			case "panels", "rows":
				items, _ := child.([]any)
				for _, item := range items {
					walkDashboard(item, panelName(item), add)
				}
			default:
				walkDashboard(child, where, add)
			}
		}
	}
}

// panelName is how findings name a panel or row: by its title.
func panelName(panel any) string {
	p, _ := panel.(map[string]any)
	if title, ok := p["title"].(string); ok && title != "" {
		return fmt.Sprintf("panel %q", title)
	}
	return "an untitled panel"
}

// walkVariables reads templating.list: each variable's query (a string,
// or an object holding one) and definition.
func walkVariables(templating any, add func(where, query string)) {
	t, _ := templating.(map[string]any)
	list, _ := t["list"].([]any)
	for _, item := range list {
		variable, _ := item.(map[string]any)
		name, _ := variable["name"].(string)
		where := "variable $" + name
		switch q := variable["query"].(type) {
		case string:
			add(where, q)
		case map[string]any:
			if query, ok := q["query"].(string); ok {
				add(where, query)
			}
		}
		if definition, ok := variable["definition"].(string); ok {
			add(where, definition)
		}
	}
}
