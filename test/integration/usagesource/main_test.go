//go:build integration

// Package usagesource runs the manager as it is installed by default, its
// usage source the metrics API, in a cluster without metrics-server: a
// real kube-apiserver with its aggregation layer, etcd, kube-scheduler and
// kwok's simulated nodes. No node publishes reclaimed capacity, so a
// TFJob's pods wait, and the job says why where users look; once
// metrics-server is installed, capacity is published and the pods run.
package usagesource

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

var (
	suite     *framework.Suite
	apiServer *framework.APIServer
	// kubeconfig is an admin's, for kubectl and the backfill CLI.
	kubeconfig string
)

// The nodes: two of 16 CPU and 64Gi, whose kubelet metrics kwok serves
// for metrics-server, each running an online pod that requests 8 CPU and
// 32Gi and uses 2 CPU and 8Gi.
var nodes = []string{"sim-cpu-0", "sim-cpu-1"}

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{
		Name:      "usage-source",
		APIServer: framework.AggregatingAPIServer,
		Scheduler: true,
		Kwok:      true,
	}, prepare))
}

// prepare makes the nodes and their online pods, and runs the manager
// with the default usage source: the metrics API, not yet served.
func prepare(s *framework.Suite) error {
	suite, apiServer = s, s.APIServer
	var err error
	if kubeconfig, err = apiServer.AdminKubeconfig(s.Logs, "user"); err != nil {
		return err
	}
	if err := createNodes(); err != nil {
		return err
	}
	opts := framework.ManagerOptions()
	// The window is long enough to see the manager's usage history warm
	// up once metrics-server answers (its first node metrics take two to
	// three of its 10 s scrapes).
	opts.ReclaimSettings = framework.ReclaimSettings(time.Minute, 40*time.Second)
	if err := opts.Validate(); err != nil {
		return err
	}
	s.StartManager(apiServer.Env.Config, opts)
	return nil
}

func createNodes() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range nodes {
		node := simkwok.NodeObject(simkwok.NodeSpec{Name: name, CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi")})
		node.Annotations[simkwok.ResourceMetricsPathAnnotation] = simkwok.ResourceMetricsPath(name)
		if err := apiServer.Client.Create(ctx, node); err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
		if err := apiServer.Client.Create(ctx, onlinePod(name)); err != nil {
			return fmt.Errorf("creating the online pod of node %s: %w", name, err)
		}
	}
	return nil
}

// onlinePod is an online service's pod on node, bound to it directly.
func onlinePod(node string) *corev1.Pod {
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: metav1.NamespaceDefault, Name: "web-" + node,
			Annotations: map[string]string{simkwok.UsageCPUAnnotation: "2", simkwok.UsageMemoryAnnotation: "8Gi"},
		},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{
				Name: "web", Image: "registry.invalid/web:never-pulled",
				Resources: corev1.ResourceRequirements{Requests: requests, Limits: requests},
			}},
		},
	}
}
