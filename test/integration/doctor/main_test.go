//go:build integration

// Package doctor runs `backfill doctor` against crafted broken states on a
// real kube-apiserver and etcd, a real kube-scheduler (so that pending
// pods carry the scheduler's own PodScheduled message), the quota
// controller of kube-controller-manager, and the backfill manager with
// leader election (reclaim off). There is no kubelet: nodes are objects with capacity in
// their status, and the tests write a pod's container statuses as a
// kubelet would.
package doctor

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/test/framework"
)

const (
	managerNamespace = "backfill-system"
	cpuNode          = "cpu-0"
	gpuNode          = "gpu-0"
	nodeGPUs         = 8
)

var (
	apiServer *framework.APIServer
	// backfill is the binary under test; kubeconfig is an admin's.
	backfill, kubeconfig string
)

func TestMain(m *testing.M) {
	setup := framework.Setup{Name: "doctor", ManagerLog: framework.ManagerLogFile, Backfill: true, Scheduler: true}
	os.Exit(framework.Run(m, setup, func(s *framework.Suite) error {
		apiServer, backfill = s.APIServer, s.Backfill
		// The quota controller fills in a ResourceQuota's status; until it
		// has, the apiserver refuses every pod of the namespace.
		if err := s.StartControllerManager(apiServer, "resourcequota-controller"); err != nil {
			return err
		}
		var err error
		if kubeconfig, err = apiServer.AdminKubeconfig(s.Logs, "doctor"); err != nil {
			return err
		}
		if err := createFixtures(); err != nil {
			return err
		}
		return startManager(s)
	}))
}

// startManager runs the backfill manager in-process with leader election,
// and waits until it leads: doctor finds it by its Lease.
//
// Reclaim is off. With it on, TFJob pods would request the batch
// resources, which no node here publishes (there is no usage source:
// every node would be frozen, publishing nothing), so the cases about
// requested capacity would never schedule; and the reclaim controller
// would overwrite the node capacity and explanations the reclaimed-capacity
// case writes itself. That case gives its TFJob the batch resources
// directly, as the operator does with --reclaim.
func startManager(s *framework.Suite) error {
	opts := framework.ManagerOptions()
	opts.LeaderElect, opts.LeaderElectionNamespace = true, managerNamespace
	opts.Reclaim = false
	s.StartManager(apiServer.Env.Config, opts)
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var lease coordinationv1.Lease
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: opts.LeaderElectionID}, &lease); err != nil {
			return false, nil
		}
		return lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the manager to lead: %w", err)
	}
	return nil
}

// createFixtures makes the manager's namespace and two nodes: a CPU node
// and a GPU node of nodeGPUs GPUs, Ready, as a kubelet would register them.
func createFixtures() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := apiServer.CreateNamespace(ctx, managerNamespace); err != nil {
		return err
	}
	for _, n := range []struct {
		name     string
		capacity corev1.ResourceList
	}{
		{cpuNode, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}},
		{gpuNode, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": *resource.NewQuantity(nodeGPUs, resource.DecimalSI)}},
	} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}}
		if err := apiServer.Client.Create(ctx, node); err != nil {
			return fmt.Errorf("creating node %s: %w", n.name, err)
		}
		node.Status = corev1.NodeStatus{
			Capacity: n.capacity, Allocatable: n.capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now()}},
		}
		if err := apiServer.Client.Status().Update(ctx, node); err != nil {
			return fmt.Errorf("writing the status of node %s: %w", n.name, err)
		}
		// The apiserver taints a new node not-ready until the node
		// lifecycle controller, which this suite does not run, sees its
		// kubelet's Ready condition.
		node.Spec.Taints = nil
		if err := apiServer.Client.Update(ctx, node); err != nil {
			return fmt.Errorf("untainting node %s: %w", n.name, err)
		}
	}
	return nil
}
