//go:build integration

// Package kwok runs the simulated nodes of internal/devcluster/kwok against
// a real kube-apiserver and etcd with a real kube-scheduler: nodes become
// Ready, the scheduler places pods by their GPU requests, and kwok plays the
// pods' lives (running, simulated training, metrics, deletion).
package kwok

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

const (
	namespace = "kwok-suite"
	cpuNode   = "sim-cpu-0"
	gpuNode   = "sim-gpu-0"
	nodeGPUs  = 8
)

var (
	apiServer *framework.APIServer
	sim       *simkwok.Kwok
)

func TestMain(m *testing.M) {
	setup := framework.Setup{Name: "kwok", Scheduler: true, Kwok: true, KwokServeLogs: true}
	os.Exit(framework.Run(m, setup, func(s *framework.Suite) error {
		apiServer, sim = s.APIServer, s.Kwok
		return createFixtures()
	}))
}

// createFixtures makes the suite's namespace and its two nodes: a CPU node
// and a GPU node with nodeGPUs GPUs.
func createFixtures() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := apiServer.CreateNamespace(ctx, namespace); err != nil {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	for _, spec := range []simkwok.NodeSpec{
		{Name: cpuNode, CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi")},
		{Name: gpuNode, CPU: resource.MustParse("96"), Memory: resource.MustParse("768Gi"), GPUs: nodeGPUs},
	} {
		if err := apiServer.Client.Create(ctx, simkwok.NodeObject(spec)); err != nil {
			return fmt.Errorf("creating node %s: %w", spec.Name, err)
		}
	}
	return nil
}
