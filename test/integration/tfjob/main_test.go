//go:build integration

// Package tfjob runs the TFJob controller in-process against a real
// kube-apiserver and etcd, with kube-controller-manager's garbage collector,
// and drives pods the way a kubelet would: by writing their status.
package tfjob

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/test/framework"
)

var apiServer *framework.APIServer

// metricsURL is the manager's /metrics endpoint.
var metricsURL string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevelFromEnv())))
	var err error
	if apiServer, err = framework.StartAPIServer(); err != nil {
		fmt.Fprintf(os.Stderr, "tfjob suite: %v\n", err)
		return 1
	}
	defer stopOrReport("kube-apiserver and etcd", apiServer.Stop)

	logs, err := os.MkdirTemp("", "backfill-tfjob-suite-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "tfjob suite: %v\n", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(logs) }()
	kcm, err := apiServer.StartControllerManager(logs, "garbage-collector-controller,namespace-controller")
	if err != nil {
		fmt.Fprintf(os.Stderr, "tfjob suite: %v\n", err)
		return 1
	}
	defer stopOrReport("kube-controller-manager", kcm.Stop)

	port, err := framework.FreePort()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tfjob suite: %v\n", err)
		return 1
	}
	metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)

	ctx, cancel := context.WithCancel(context.Background())
	opts := manager.DefaultOptions()
	opts.MetricsAddress, opts.HealthAddress = fmt.Sprintf("127.0.0.1:%d", port), "0"
	opts.StopNotice = stopNotice
	opts.RetireAfter = 0 // retire finished jobs at once, for TestRetire
	done := make(chan error, 1)
	go func() { done <- manager.RunWithConfig(ctx, apiServer.Env.Config, opts) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "tfjob suite: manager: %v\n", err)
		}
	}()
	return m.Run()
}

func stopOrReport(what string, stop func() error) {
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "tfjob suite: stopping %s: %v\n", what, err)
	}
}

// zapLevelFromEnv lets BACKFILL_TEST_LOG=debug show the manager's logs.
func zapLevelFromEnv() zapcore.Level {
	if os.Getenv("BACKFILL_TEST_LOG") == "debug" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

var namespaceSeq atomic.Int64

// newNamespace creates a namespace for one test; the namespace controller
// removes it with its contents when the test ends.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	if name == "" {
		name = fmt.Sprintf("tfjob-%d", namespaceSeq.Add(1))
	}
	if err := apiServer.CreateNamespace(context.Background(), name); err != nil {
		t.Fatalf("Creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { deleteNamespace(t, name) })
	return name
}

// stopNotice is the manager's notice before it stops a running pod: short,
// so the suites stay fast, and long enough to see the notice first.
const stopNotice = 2 * time.Second
