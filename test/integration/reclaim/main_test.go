//go:build integration

// Package reclaim runs reclaimed capacity on the real control plane: a
// kube-apiserver and etcd, kube-scheduler, kwok's simulated nodes and their
// kubelet metrics, a real Prometheus scraping them and the manager, and the
// manager in-process with its usage from that Prometheus. Online pods
// request whole nodes and use little; training runs in what they leave
// idle, and gets out of their way when their use rises.
package reclaim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

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
	// stopNotice is how long a victim is told before it is evicted: long
	// enough to tell an eviction on a checkpoint from one at the end.
	stopNotice = 20 * time.Second
)

func settings() reclaim.Settings {
	s := reclaim.DefaultSettings()
	s.Interval = time.Second
	s.Window = 20 * time.Second
	s.GrowthPerMinute = 1000
	s.MinChange = 1
	s.Cooldown = 10 * time.Second
	s.StaleAfter = 8 * time.Second
	s.CPUEvictionDelay = 0 // the suite raises online use for good, never in bursts
	s.OnlineEvictAfter = 3 * time.Second
	s.OnlineRecoverAfter = 5 * time.Second
	return s
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	suite, err := framework.NewSuite("reclaim")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { code = suite.Close(code) }()

	if apiServer, err = framework.StartAPIServer(); err != nil {
		return suite.Fail(err)
	}
	suite.OnStop("kube-apiserver and etcd", apiServer.Stop)
	// The disruption controller keeps PodDisruptionBudgets' status, which
	// the Eviction API reads; the quota controller ResourceQuotas', without
	// which the apiserver admits no pod in their namespace.
	kcm, err := apiServer.StartControllerManager(suite.Logs, "garbage-collector-controller,disruption-controller,resourcequota-controller")
	if err != nil {
		return suite.Fail(err)
	}
	suite.OnStop("kube-controller-manager", kcm.Stop)
	scheduler, err := apiServer.StartScheduler(suite.Logs)
	if err != nil {
		return suite.Fail(err)
	}
	suite.OnStop("kube-scheduler", scheduler.Stop)
	sim, err := suite.StartKwok(apiServer, false)
	if err != nil {
		return suite.Fail(err)
	}

	metricsPort, err := framework.FreePort()
	if err != nil {
		return suite.Fail(err)
	}
	managerMetrics := fmt.Sprintf("127.0.0.1:%d", metricsPort)
	if latency, err = startLatencyServer(); err != nil {
		return suite.Fail(err)
	}
	suite.OnStop("the online service's latency", latency.stop)
	if prom, err = startPrometheus(filepath.Join(suite.Logs, "prometheus"), sim.Address(), managerMetrics, latency.addr); err != nil {
		return suite.Fail(err)
	}
	suite.OnStop("prometheus", prom.stop)

	opts := manager.DefaultOptions()
	opts.MetricsAddress, opts.HealthAddress = managerMetrics, "0"
	opts.UsageSource, opts.PrometheusURL, opts.PrometheusRateWindow = manager.UsageSourcePrometheus, prom.url, rateWindow
	opts.ReclaimSettings = settings()
	opts.StopNotice = stopNotice
	if err := opts.Validate(); err != nil {
		return suite.Fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- manager.RunWithConfig(ctx, apiServer.Env.Config, opts) }()
	suite.OnStop("the manager", func() error {
		cancel()
		return <-done
	})
	if err := createFixtures(); err != nil {
		return suite.Fail(err)
	}
	return m.Run()
}

// zapLevel lets BACKFILL_TEST_LOG=debug show the manager's logs.
func zapLevel() zapcore.Level {
	if os.Getenv("BACKFILL_TEST_LOG") == "debug" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
