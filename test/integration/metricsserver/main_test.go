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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

var apiServer *framework.APIServer

func TestMain(m *testing.M) {
	setup := framework.Setup{Name: "metrics-server", APIServer: framework.AggregatingAPIServer, Kwok: true}
	os.Exit(framework.Run(m, setup, func(s *framework.Suite) error {
		apiServer = s.APIServer
		// The pods first: their metrics take metrics-server two to three
		// scrapes, which pass while it starts.
		if err := createFixtures(); err != nil {
			return err
		}
		metricsServer, err := apiServer.StartMetricsServer(s.Logs)
		if err != nil {
			return err
		}
		s.OnStop("metrics-server", metricsServer.Stop)
		return nil
	}))
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
