package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// requestKey is one series of the apiserver's apiserver_request_total:
// verb as the apiserver reports it (POST, PUT, PATCH, DELETE, GET, LIST,
// WATCH, ...), resource with its subresource (tfjobs/status), and the
// response code.
type requestKey struct {
	verb, resource, code string
}

// requestCounts are request counters by series.
type requestCounts map[requestKey]float64

func (r requestCounts) clone() requestCounts {
	out := make(requestCounts, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// minus is r - before, dropping series that did not move.
func (r requestCounts) minus(before requestCounts) requestCounts {
	out := requestCounts{}
	for k, v := range r {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	for k, v := range before {
		if _, ok := r[k]; !ok && v != 0 {
			out[k] = -v
		}
	}
	return out
}

// sum adds the series that match.
func (r requestCounts) sum(match func(requestKey) bool) float64 {
	total := 0.0
	for k, v := range r {
		if match(k) {
			total += v
		}
	}
	return total
}

// isWrite: the verbs that change state in etcd (when they succeed).
func isWrite(verb string) bool {
	switch verb {
	case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION":
		return true
	}
	return false
}

func succeeded(code string) bool { return strings.HasPrefix(code, "2") }

// byVerbAndResource sums over codes, for the report.
type verbResource struct {
	verb, resource string
	ok, failed     float64
}

func (r requestCounts) byVerbAndResource() []verbResource {
	m := map[[2]string]*verbResource{}
	for k, v := range r {
		key := [2]string{k.verb, k.resource}
		e := m[key]
		if e == nil {
			e = &verbResource{verb: k.verb, resource: k.resource}
			m[key] = e
		}
		if succeeded(k.code) {
			e.ok += v
		} else {
			e.failed += v
		}
	}
	out := make([]verbResource, 0, len(m))
	for _, e := range m {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].resource != out[j].resource {
			return out[i].resource < out[j].resource
		}
		return out[i].verb < out[j].verb
	})
	return out
}

// parseAPIServerRequests reads apiserver_request_total from the text of
// the apiserver's /metrics.
func parseAPIServerRequests(body []byte) (requestCounts, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parsing the apiserver's metrics: %w", err)
	}
	out := requestCounts{}
	family := families["apiserver_request_total"]
	if family == nil {
		return nil, fmt.Errorf("the apiserver's /metrics has no apiserver_request_total")
	}
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		resource := labels["resource"]
		if resource == "" {
			continue // non-resource URLs such as /metrics and /healthz
		}
		if sub := labels["subresource"]; sub != "" {
			resource += "/" + sub
		}
		out[requestKey{verb: labels["verb"], resource: resource, code: labels["code"]}] += m.GetCounter().GetValue()
	}
	return out, nil
}

// classify names a request of the harness the way the apiserver's
// apiserver_request_total does. Non-resource paths are not counted.
func classify(method, path, watch string) (requestKey, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		segs = segs[3:]
	default:
		return requestKey{}, false
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	if len(segs) == 0 || segs[0] == "" {
		return requestKey{}, false
	}
	resource, named := segs[0], len(segs) >= 2
	if len(segs) >= 3 {
		resource += "/" + segs[2]
	}
	verb := method
	switch {
	case method == "GET" && (watch == "true" || watch == "1"):
		verb = "WATCH"
	case method == "GET" && !named:
		verb = "LIST"
	case method == "DELETE" && !named:
		verb = "DELETECOLLECTION"
	}
	return requestKey{verb: verb, resource: resource}, true
}
