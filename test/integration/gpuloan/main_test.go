//go:build integration

// Package gpuloan runs GPU loans on the real control plane: kube-apiserver
// and etcd (aggregating, for KEDA's metrics apiserver), kube-scheduler,
// kube-controller-manager's Deployment, ReplicaSet and HPA controllers, a
// real KEDA (operator and metrics apiserver, `make keda-tools`), kwok's
// simulated GPU nodes, and the manager in-process. An online inference
// Deployment that KEDA scales with a cron trigger leaves GPUs to a TFJob
// outside its window; the job is told a checkpoint's time before the
// window, pauses, the window's pods find their GPUs free, and the job
// resumes when the window closes.
package gpuloan

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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
	// unforecastModel is a pool whose online workload states no schedule.
	unforecastModel = "NVIDIA-L4"
	// spikeModel is a pool where online work rises unforeseen.
	spikeModel = "Tesla-T4"
	// gateModel is a pool whose loan is too short for a new job.
	gateModel = "NVIDIA-H100-80GB-HBM3"
	// patientClass is the PriorityClass of online pods that wait rather
	// than preempt.
	patientClass = "online-patient"
	// checkpointTime is the jobs' checkpoint time until measured: with
	// the 50% margin and a second of slack, the notice comes 10 s before
	// the deadline.
	checkpointTime = 6 * time.Second
)

// nodeNames are the pool's nodes: 12 GPUs.
var nodeNames = []string{"gpu-0", "gpu-1", "gpu-2"}

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
	os.Exit(framework.Run(m, framework.Setup{Name: "gpuloan", APIServer: framework.AggregatingAPIServer, Scheduler: true, Kwok: true}, prepare))
}

// prepare runs KEDA and the controllers its HPAs need, makes the GPU nodes
// and runs the manager.
func prepare(s *framework.Suite) error {
	apiServer = s.APIServer
	if _, err := s.StartKEDA(apiServer); err != nil {
		return err
	}
	// The HPA controller looks at every HPA each sync period (15 s by
	// default); 2 s keeps the suite short.
	if err := s.StartControllerManager(apiServer, "deployment-controller,replicaset-controller,garbage-collector-controller,horizontal-pod-autoscaler-controller",
		"--horizontal-pod-autoscaler-sync-period=2s"); err != nil {
		return err
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
	// A pool of its own for the workloads no schedule foretells.
	spec := simkwok.NodeSpec{Name: "l4-0", CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi"), GPUs: 2,
		Labels: map[string]string{colocation.GPUModelLabel: unforecastModel}}
	if err := apiServer.Client.Create(ctx, simkwok.NodeObject(spec)); err != nil {
		return fmt.Errorf("creating node %s: %w", spec.Name, err)
	}
	for name, gpuModel := range map[string]string{"t4-0": spikeModel, "h100-0": gateModel} {
		spec = simkwok.NodeSpec{Name: name, CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi"), GPUs: 2,
			Labels: map[string]string{colocation.GPUModelLabel: gpuModel}}
		if err := apiServer.Client.Create(ctx, simkwok.NodeObject(spec)); err != nil {
			return fmt.Errorf("creating node %s: %w", spec.Name, err)
		}
	}
	// Online pods that preempt nothing, so that only the manager frees
	// GPUs for them: the spike test sees its own return, not the
	// scheduler's.
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: patientClass}, Value: colocation.DefaultOfflinePriority - 100,
		PreemptionPolicy: ptr.To(corev1.PreemptNever)}
	if err := apiServer.Client.Create(ctx, pc); err != nil {
		return fmt.Errorf("creating PriorityClass %s: %w", patientClass, err)
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
