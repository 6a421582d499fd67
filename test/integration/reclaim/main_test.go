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

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/internal/reclaim"
	"github.com/backfill-dev/backfill/test/framework"
)

var (
	apiServer *framework.APIServer
	prom      *prometheus
	// logs holds every process's log; kept when a test fails.
	logs string
)

// The manager's reclaim settings: the production model, on a clock fast
// enough for a test. Prometheus scrapes every second.
const (
	scrapeInterval = time.Second
	rateWindow     = 5 * time.Second
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
	return s
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	var err error
	if logs, err = os.MkdirTemp("", "backfill-reclaim-suite-"); err != nil {
		return fail(err)
	}
	defer func() {
		if code == 0 && os.Getenv("BACKFILL_KEEP_LOGS") == "" {
			_ = os.RemoveAll(logs)
			return
		}
		fmt.Fprintf(os.Stderr, "reclaim suite: logs kept in %s\n", logs)
	}()

	if apiServer, err = framework.StartAPIServer(); err != nil {
		return fail(err)
	}
	defer stopOrReport("kube-apiserver and etcd", apiServer.Stop)
	kcm, err := apiServer.StartControllerManager(logs, "garbage-collector-controller")
	if err != nil {
		return fail(err)
	}
	defer stopOrReport("kube-controller-manager", kcm.Stop)
	scheduler, err := apiServer.StartScheduler(logs)
	if err != nil {
		return fail(err)
	}
	defer stopOrReport("kube-scheduler", scheduler.Stop)

	kubeconfig, err := apiServer.AdminKubeconfig(logs, "kwok")
	if err != nil {
		return fail(err)
	}
	sim, err := simkwok.Start(simkwok.Options{
		Binary:     filepath.Join(framework.BinDir(), "kwok"),
		Kubeconfig: kubeconfig,
		StateDir:   filepath.Join(logs, "kwok"),
	})
	if err != nil {
		return fail(err)
	}
	defer stopOrReport("kwok", sim.Stop)

	metricsPort, err := framework.FreePort()
	if err != nil {
		return fail(err)
	}
	managerMetrics := fmt.Sprintf("127.0.0.1:%d", metricsPort)
	if prom, err = startPrometheus(filepath.Join(logs, "prometheus"), sim.Address(), managerMetrics); err != nil {
		return fail(err)
	}
	defer stopOrReport("prometheus", prom.stop)

	opts := manager.DefaultOptions()
	opts.MetricsAddress, opts.HealthAddress = managerMetrics, "0"
	opts.UsageSource, opts.PrometheusURL, opts.PrometheusRateWindow = manager.UsageSourcePrometheus, prom.url, rateWindow
	opts.ReclaimSettings = settings()
	if err := opts.Validate(); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- manager.RunWithConfig(ctx, apiServer.Env.Config, opts) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "reclaim suite: manager: %v\n", err)
		}
	}()
	if err := createFixtures(); err != nil {
		return fail(err)
	}
	return m.Run()
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "reclaim suite: %v\n", err)
	return 1
}

func stopOrReport(what string, stop func() error) {
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "reclaim suite: stopping %s: %v\n", what, err)
	}
}

// zapLevel lets BACKFILL_TEST_LOG=debug show the manager's logs.
func zapLevel() zapcore.Level {
	if os.Getenv("BACKFILL_TEST_LOG") == "debug" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
