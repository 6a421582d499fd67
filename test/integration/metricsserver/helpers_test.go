//go:build integration

package metricsserver

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
)

const (
	// pollInterval is how often the suite looks again.
	pollInterval = 500 * time.Millisecond
	// metricsTimeout bounds the wait for metrics: metrics-server reports a
	// pod after two to three scrapes of metricsserver.Resolution, and
	// kwok's counters start at 0.
	metricsTimeout = 2 * time.Minute
	// cpuTolerance is the relative error allowed in CPU: metrics-server
	// divides the counter's growth by its own clock between two scrapes,
	// kwok grows the counter by its clock; they differ by the latencies.
	cpuTolerance = 0.05
)

func metricsClient(t *testing.T) metricsclient.MetricsV1beta1Interface {
	t.Helper()
	c, err := metricsclient.NewForConfig(apiServer.Env.Config)
	if err != nil {
		t.Fatalf("creating the metrics API client: %v", err)
	}
	return c
}

// eventually polls check until it returns nil, failing the test with its
// last complaint after metricsTimeout.
func eventually(t *testing.T, what string, check func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), pollInterval, metricsTimeout, true, func(ctx context.Context) (bool, error) {
		err := check(ctx)
		if ctx.Err() == nil { // keep the last real answer, not the deadline's
			last = err
		}
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %v; last: %v", what, metricsTimeout, last)
	}
}

// sameUsage says how got differs from want: CPU within cpuTolerance,
// memory exactly (kwok reports the annotation's bytes as they are).
func sameUsage(got, want corev1.ResourceList) error {
	gotCPU, wantCPU := got.Cpu().MilliValue(), want.Cpu().MilliValue()
	if math.Abs(float64(gotCPU-wantCPU)) > cpuTolerance*float64(wantCPU) {
		return fmt.Errorf("cpu %dm, want %dm", gotCPU, wantCPU)
	}
	if !got.Memory().Equal(*want.Memory()) {
		return fmt.Errorf("memory %s, want %s", got.Memory(), want.Memory())
	}
	return nil
}
