package devcluster

import (
	"os"
	"path/filepath"
	"time"

	"github.com/backfill-dev/backfill/internal/observability/rules"
)

// minAlertFor is the shortest `for:` of the local cluster's rules: three of
// its Prometheus's 5 s evaluations, so that one odd sample fires nothing.
const minAlertFor = 15 * time.Second

// alertRules are every alerting rule backfill ships, the chart's rules,
// with each `for:` scaled to the compressed day as the reclaim settings
// are (reclaimSettings): an hour of waiting passes in an hour of the
// online service's day, DayLength/24. The windows of their queries are
// not scaled; a rule without `for:` fires as on a real cluster.
func (o Options) alertRules() []rules.Group {
	hour := o.DayLength / 24
	groups := rules.Groups()
	for g := range groups {
		alerts := append([]rules.Alert(nil), groups[g].Alerts...)
		for a := range alerts {
			if alerts[a].For > 0 {
				scaled := time.Duration(float64(alerts[a].For) * float64(hour) / float64(time.Hour))
				alerts[a].For = max(scaled.Round(time.Second), minAlertFor)
			}
		}
		groups[g].Alerts = alerts
	}
	return groups
}

// writeAlertRules writes the rule file the local Prometheus loads.
func (c *Cluster) writeAlertRules(file string) error {
	data, err := rules.RuleFile(c.opts.alertRules())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Clean(file), data, 0o644)
}
