package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Names are the names of every metric Register registers, in the order of
// docs/observability.md, as their descriptors give them: what the docs'
// check compares the metric names they mention with.
func Names() []string {
	var names []string
	for _, c := range collectors {
		names = append(names, DescribedNames(c)...)
	}
	return names
}

// DescribedNames are the names of the metrics of a collector.
func DescribedNames(c prometheus.Collector) []string {
	ch := make(chan *prometheus.Desc, 10)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	var names []string
	for d := range ch {
		// Desc keeps its name private; its String form starts with it.
		s := d.String()
		start := strings.Index(s, `fqName: "`) + len(`fqName: "`)
		names = append(names, s[start:start+strings.Index(s[start:], `"`)])
	}
	return names
}
