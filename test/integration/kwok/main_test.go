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
	"path/filepath"
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
	os.Exit(run(m))
}

// run is TestMain's body, so that the deferred stops run before os.Exit.
// Every process is stopped by the PID it was started with.
func run(m *testing.M) (code int) {
	logs, err := os.MkdirTemp("", "backfill-kwok-suite-")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if code == 0 && os.Getenv("BACKFILL_KEEP_LOGS") == "" {
			_ = os.RemoveAll(logs)
			return
		}
		fmt.Fprintf(os.Stderr, "kwok suite: logs kept in %s\n", logs)
	}()

	if apiServer, err = framework.StartAPIServer(); err != nil {
		return fail(err)
	}
	defer stopOrReport("kube-apiserver and etcd", apiServer.Stop)

	scheduler, err := apiServer.StartScheduler(logs)
	if err != nil {
		return fail(err)
	}
	defer stopOrReport("kube-scheduler", scheduler.Stop)

	kubeconfig, err := apiServer.AdminKubeconfig(logs, "kwok")
	if err != nil {
		return fail(err)
	}
	sim, err = simkwok.Start(simkwok.Options{
		Binary:     filepath.Join(framework.BinDir(), "kwok"),
		Kubeconfig: kubeconfig,
		StateDir:   filepath.Join(logs, "kwok"),
		ServeLogs:  true,
	})
	if err != nil {
		return fail(err)
	}
	defer stopOrReport("kwok", sim.Stop)

	if err := createFixtures(); err != nil {
		return fail(err)
	}
	return m.Run()
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

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "kwok suite: %v\n", err)
	return 1
}

func stopOrReport(what string, stop func() error) {
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "kwok suite: stopping %s: %v\n", what, err)
	}
}
