package devcluster

import (
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/observability/rules"
)

// The local cluster loads every rule backfill ships, each `for:` scaled to
// its compressed day but never below minAlertFor, its expression unchanged.
func TestAlertRulesScaleForToTheDay(t *testing.T) {
	opts := DefaultOptions()
	opts.DayLength = 24 * time.Minute // an hour of the day per minute
	got := opts.alertRules()
	shipped := rules.Groups()
	if len(got) != len(shipped) {
		t.Fatalf("%d groups, want the %d backfill ships", len(got), len(shipped))
	}
	for g := range shipped {
		if len(got[g].Alerts) != len(shipped[g].Alerts) {
			t.Fatalf("group %s: %d alerts, want %d", shipped[g].Name, len(got[g].Alerts), len(shipped[g].Alerts))
		}
		for a, alert := range shipped[g].Alerts {
			want := time.Duration(0)
			if alert.For > 0 {
				want = max(alert.For/60, minAlertFor)
			}
			if got[g].Alerts[a].For != want {
				t.Errorf("%s: for %v, want %v (shipped with %v)", alert.Name, got[g].Alerts[a].For, want, alert.For)
			}
			if got[g].Alerts[a].Expr != alert.Expr {
				t.Errorf("%s: the expression changed", alert.Name)
			}
		}
	}
}
