//go:build integration

// Package metricsserver runs metrics-server behind a real kube-apiserver's
// aggregation layer, scraping kwok's simulated nodes, all on loopback: the
// metrics API (metrics.k8s.io/v1beta1) reports what the pods' kwok usage
// annotations say, and backfill's reclaim controller reads online use from
// it.
package metricsserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

var apiServer *framework.APIServer

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// run is TestMain's body, so that the deferred stops run before os.Exit.
// Every process is stopped by the PID it was started with.
func run(m *testing.M) (code int) {
	logs, err := os.MkdirTemp("", "backfill-metrics-server-suite-")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if code == 0 && os.Getenv("BACKFILL_KEEP_LOGS") == "" {
			_ = os.RemoveAll(logs)
			return
		}
		fmt.Fprintf(os.Stderr, "metrics-server suite: logs kept in %s\n", logs)
	}()

	if apiServer, err = framework.StartAggregatingAPIServer(logs); err != nil {
		return fail(err)
	}
	defer stopOrReport("kube-apiserver and etcd", apiServer.Stop)

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

	// The pods first: their metrics take metrics-server two to three
	// scrapes, which pass while it starts.
	if err := createFixtures(); err != nil {
		return fail(err)
	}
	metricsServer, err := apiServer.StartMetricsServer(logs)
	if err != nil {
		return fail(err)
	}
	defer stopOrReport("metrics-server", metricsServer.Stop)
	return m.Run()
}

// createFixtures makes the suite's namespace, nodes and pods (fixtures_test.go).
func createFixtures() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := apiServer.CreateNamespace(ctx, namespace); err != nil {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	for _, name := range []string{busyNode, quietNode} {
		node := simkwok.NodeObject(simkwok.NodeSpec{Name: name, CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi")})
		node.Annotations[simkwok.ResourceMetricsPathAnnotation] = simkwok.ResourceMetricsPath(name)
		if err := apiServer.Client.Create(ctx, node); err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
	}
	for _, p := range fixturePods {
		if err := apiServer.Client.Create(ctx, p.object()); err != nil {
			return fmt.Errorf("creating pod %s: %w", p.name, err)
		}
	}
	return nil
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "metrics-server suite: %v\n", err)
	return 1
}

func stopOrReport(what string, stop func() error) {
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "metrics-server suite: stopping %s: %v\n", what, err)
	}
}
