package framework

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/backfill-dev/backfill/internal/metrics/metricstest"
)

// RegistrySample is the first series of a metric of the manager's
// registry (a manager running in the test's process) with the given
// labels; nil when there is none.
func RegistrySample(t *testing.T, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	return metricstest.Sample(t, name, labels)
}
