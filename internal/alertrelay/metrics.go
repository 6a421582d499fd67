package alertrelay

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/backfill-dev/backfill/internal/metrics"
)

// The values of backfill_alert_relay_notifications_total's result label.
const (
	// ResultDelivered: the robot accepted the message.
	ResultDelivered = "delivered"
	// ResultRefused: the robot answered with an error (a bad signature, a
	// missing keyword, its rate limit, …).
	ResultRefused = "refused"
	// ResultUnreachable: the robot did not answer.
	ResultUnreachable = "unreachable"
	// ResultMisconfigured: the robot's URL or secret file could not be used.
	ResultMisconfigured = "misconfigured"
	// ResultInvalid: the payload was not a readable Alertmanager notification.
	ResultInvalid = "invalid"
)

// relayMetrics are the relay's metrics, on its own registry: it runs in
// a pod of its own.
type relayMetrics struct {
	notifications *prometheus.CounterVec
}

func newRelayMetrics() *relayMetrics {
	return &relayMetrics{
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backfill_alert_relay_notifications_total",
			Help: "Alertmanager notifications the alert relay handled, by robot (dingtalk, wecom) and result (delivered, refused, unreachable, misconfigured, invalid).",
		}, []string{"robot", "result"}),
	}
}

// MetricNames are the names of the relay's metrics, for the docs' check.
func MetricNames() []string {
	return metrics.DescribedNames(newRelayMetrics().notifications)
}
