//go:build integration

// Package gpuloan runs GPU loans on the real control plane: kube-apiserver
// and etcd, kube-scheduler, the Deployment and ReplicaSet controllers of
// kube-controller-manager, kwok's simulated GPU nodes, and the manager
// in-process. An online inference Deployment scaled by a KEDA ScaledObject
// (its CRD installed; the test scales the Deployment as KEDA's HPA would)
// leaves its GPUs to a TFJob at night; the job is told before the
// morning, pauses, the morning's pods find their GPUs free, and the job
// resumes when the window ends.
package gpuloan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/colocation"
	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/test/framework"
)

var apiServer *framework.APIServer

const (
	onlineNS  = "online"
	offlineNS = "ml"
	// model is the pool's GPU model; each node has gpusPerNode.
	model       = "NVIDIA-A100-SXM4-80GB"
	gpusPerNode = 4
	// checkpointTime is the jobs' checkpoint time until measured: with
	// the 50% margin and a second of slack, the notice comes 10 s before
	// the deadline.
	checkpointTime = 6 * time.Second
)

var nodeNames = []string{"gpu-0", "gpu-1"}

// settings are the production model on a clock fast enough for a suite: a
// decision a second, no lead, no warm-up, short loans worth a resume.
func settings() gpuloan.Settings {
	s := gpuloan.DefaultSettings()
	s.Interval = time.Second
	s.Tide.Lead = 0
	s.Tide.DefaultCheckpointTime = checkpointTime
	s.Tide.CheckpointSlack = time.Second
	s.Tide.MinLoan = 5 * time.Second
	s.DefaultWarmUp = 0
	return s
}

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{Name: "gpuloan", Controllers: "deployment-controller,replicaset-controller,garbage-collector-controller",
		Scheduler: true, Kwok: true}, prepare))
}

// prepare installs the ScaledObject CRD, makes the GPU nodes and runs the
// manager.
func prepare(s *framework.Suite) error {
	apiServer = s.APIServer
	if _, err := envtest.InstallCRDs(apiServer.Env.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join("testdata", "keda.sh_scaledobjects.yaml")}, ErrorIfPathMissing: true,
	}); err != nil {
		return fmt.Errorf("installing the ScaledObject CRD: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range []string{onlineNS, offlineNS} {
		if err := apiServer.CreateNamespace(ctx, ns); err != nil {
			return err
		}
	}
	for _, name := range nodeNames {
		spec := simkwok.NodeSpec{Name: name, CPU: resource.MustParse("32"), Memory: resource.MustParse("128Gi"), GPUs: gpusPerNode,
			Labels: map[string]string{colocation.GPUModelLabel: model}}
		if err := apiServer.Client.Create(ctx, simkwok.NodeObject(spec)); err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
	}
	opts := framework.ManagerOptions()
	// No usage source runs here: training pods keep their requests.
	opts.Reclaim = false
	opts.GPULoanSettings = settings()
	if err := opts.Validate(); err != nil {
		return err
	}
	s.StartManager(apiServer.Env.Config, opts)
	return nil
}

// gpus is a resource list of n GPUs with a little CPU and memory.
func gpus(n int) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:                       resource.MustParse("1"),
		corev1.ResourceMemory:                    resource.MustParse("2Gi"),
		corev1.ResourceName(simkwok.GPUResource): *resource.NewQuantity(int64(n), resource.DecimalSI),
	}
}
