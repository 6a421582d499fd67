package dashboards

import (
	"sort"
	"strings"
)

// The dashboards' variables, as queries reference them.
const (
	VarDatasource = "datasource"
	VarNamespace  = "namespace"
	VarTFJob      = "tfjob"
	// VarNode is the cockpit's node, of the node agent panels.
	VarNode = "node"
)

// datasourceUID is how every panel and query names its datasource: the
// datasource variable, never a fixed uid, so that the dashboards work in
// any Grafana, provisioned or imported.
const datasourceUID = "${" + VarDatasource + "}"

// AllValue is what an "All" selection of a multi-value variable stands for
// in a regex matcher; `backfill top` uses it for the whole cluster.
const AllValue = ".*"

// Substitute replaces the variables in a query the way Grafana
// interpolates them: $name, ${name} and ${name:format} (the format is
// ignored: backfill's queries use multi-value variables only inside =~),
// and Grafana's built-ins such as $__rate_interval, from values. A
// variable missing from values stays as it is, so that a parser refuses
// the query.
func Substitute(query string, values map[string]string) string {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	// Longest first, so that $namespace is not read as $name + "space".
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	var b strings.Builder
	for i := 0; i < len(query); {
		if query[i] != '$' {
			b.WriteByte(query[i])
			i++
			continue
		}
		name, width := variableAt(query[i:], names)
		if width == 0 {
			b.WriteByte(query[i])
			i++
			continue
		}
		b.WriteString(values[name])
		i += width
	}
	return b.String()
}

// variableAt reads the variable that s starts with, among names: its name
// and how many bytes it takes, or width 0 when s starts with none.
func variableAt(s string, names []string) (string, int) {
	if strings.HasPrefix(s, "${") {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return "", 0
		}
		name, _, _ := strings.Cut(s[2:end], ":")
		for _, n := range names {
			if n == name {
				return n, end + 1
			}
		}
		return "", 0
	}
	for _, n := range names {
		if strings.HasPrefix(s[1:], n) && !isNameByte(s, 1+len(n)) {
			return n, 1 + len(n)
		}
	}
	return "", 0
}

// isNameByte reports whether s has a variable-name character at i.
func isNameByte(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
