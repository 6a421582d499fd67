package rules

import (
	"fmt"
	"regexp"
	"strings"
)

// alertName is the shape of every alert's name.
var alertName = regexp.MustCompile(`^Backfill(TFJob)?[A-Z][A-Za-z0-9]*$`)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// scrapedByServiceMonitor adds to a manager series (promqltest's load
// syntax) the target labels the Prometheus Operator gives every target of a
// ServiceMonitor, as honorLabels: true keeps them: the series' own
// namespace and pod win, and series without them get the manager's.
func scrapedByServiceMonitor(series string) string {
	end := strings.Index(series, "}")
	own, rest := series[:end], series[end:]
	extra := `,service="backfill-manager-metrics",endpoint="metrics",container="manager"`
	for name, value := range map[string]string{"namespace": "backfill-system", "pod": "backfill-manager-7d9f-abcde"} {
		if !strings.Contains(own, name+`="`) {
			extra += fmt.Sprintf(",%s=%q", name, value)
		}
	}
	return own + extra + rest
}
