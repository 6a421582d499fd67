package expr_test

import (
	"testing"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/expr"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// TestOnlineLabelValues keeps the label values the fragments select in
// step with the ones the manager decides by. An external test: reclaim
// imports expr.
func TestOnlineLabelValues(t *testing.T) {
	for got, want := range map[string]string{
		expr.PeersAll: reclaim.PeersAll, expr.PeersWithOffline: reclaim.PeersWithOffline, expr.PeersWithoutOffline: reclaim.PeersWithoutOffline,
		expr.OnlineSignalLatency: reclaim.SignalLatency, expr.OnlineSignalCPUWait: reclaim.SignalCPUWait,
	} {
		if got != want {
			t.Errorf("fragments select %q, the manager uses %q", got, want)
		}
	}
}

// TestOnlineMetricNames keeps the names and action values the fragments
// read in step with what the manager exports.
func TestOnlineMetricNames(t *testing.T) {
	for got, want := range map[string]string{
		expr.MetricOnlinePodInfo: metrics.NameOnlinePodInfo, expr.MetricOnlineLatencyObjective: metrics.NameOnlineObjective,
		expr.MetricOnlineLatencyP99: metrics.NameOnlineP99, expr.MetricReclaimOnlineHold: metrics.NameReclaimOnlineHold,
		expr.MetricReclaimOnlineActions: metrics.NameReclaimOnlineActed,
		expr.OnlineActionHold:           metrics.OnlineHold, expr.OnlineActionGiveBack: metrics.OnlineGiveBack, expr.OnlineActionRelease: metrics.OnlineRelease,
	} {
		if got != want {
			t.Errorf("fragments read %q, the manager exports %q", got, want)
		}
	}
}
