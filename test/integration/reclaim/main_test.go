//go:build integration

// Package reclaim runs reclaimed capacity on the real control plane: a
// kube-apiserver and etcd, kube-scheduler, kwok's simulated nodes and their
// kubelet metrics, a real Prometheus scraping them and the manager, and the
// manager in-process with its usage from that Prometheus. Online pods
// request whole nodes and use little; training runs in what they leave
// idle, and gets out of their way when their use rises.
package reclaim

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/internal/reclaim"
	"github.com/backfill-dev/backfill/test/framework"
)

var (
	apiServer *framework.APIServer
	prom      *prometheus
	latency   *latencyServer
)

// The manager's reclaim settings: the production model, on a clock fast
// enough for a test. Prometheus scrapes every second.
const (
	scrapeInterval = time.Second
	rateWindow     = 5 * time.Second
	// onlineWindow holds two scrapes or more whatever their jitter, and
	// is shorter than the online signal's evict-after.
	onlineWindow = 2500 * time.Millisecond
	// stopNotice is how long a victim is told before it is evicted: long
	// enough to tell an eviction on a checkpoint from one at the end.
	stopNotice = 20 * time.Second
)

func settings() reclaim.Settings {
	s := framework.ReclaimSettings(20*time.Second, 8*time.Second)
	s.Cooldown = 10 * time.Second
	s.OnlineEvictAfter = 3 * time.Second
	s.OnlineRecoverAfter = 5 * time.Second
	s.OnlineWindow = onlineWindow
	return s
}

// controllers the suite runs: the disruption controller keeps
// PodDisruptionBudgets' status, which the Eviction API reads; the quota
// controller ResourceQuotas', without which the apiserver admits no pod in
// their namespace.
const controllers = "garbage-collector-controller,disruption-controller,resourcequota-controller"

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{Name: "reclaim", Controllers: controllers, Scheduler: true, Kwok: true}, prepare))
}

// prepare runs the online service's latency server, a Prometheus scraping
// it, kwok and the manager, and the manager with its usage from that
// Prometheus; then it makes the nodes and pods (fixtures_test.go).
func prepare(s *framework.Suite) error {
	apiServer = s.APIServer
	metricsPort, err := framework.FreePort()
	if err != nil {
		return err
	}
	managerMetrics := fmt.Sprintf("127.0.0.1:%d", metricsPort)
	if latency, err = startLatencyServer(); err != nil {
		return err
	}
	s.OnStop("the online service's latency", latency.stop)
	if prom, err = startPrometheus(filepath.Join(s.Logs, "prometheus"), s.Kwok.Address(), managerMetrics, latency.addr); err != nil {
		return err
	}
	s.OnStop("prometheus", prom.stop)

	opts := framework.ManagerOptions()
	opts.MetricsAddress = managerMetrics
	opts.UsageSource, opts.PrometheusURL, opts.PrometheusRateWindow = manager.UsageSourcePrometheus, prom.url, rateWindow
	opts.ReclaimSettings = settings()
	opts.StopNotice = stopNotice
	if err := opts.Validate(); err != nil {
		return err
	}
	s.StartManager(apiServer.Env.Config, opts)
	return createFixtures()
}
