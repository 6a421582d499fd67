//go:build integration

// Package kueue runs backfill under real Kueue: a kube-apiserver and etcd,
// kube-scheduler, kwok's simulated nodes, Kueue v0.19 built from its module
// with its TFJob integration on and its webhooks on loopback, and the
// manager in-process. Kueue admits, queues and preempts TFJobs through
// spec.runPolicy.suspend and the replica templates; backfill must follow.
package kueue

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

	"github.com/backfill-dev/backfill/internal/devcluster/kueue"
	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

var apiServer *framework.APIServer

const (
	// podsReadyTimeout is how long Kueue gives an admitted job to have all
	// its pods running before it evicts and requeues it: long enough for
	// every healthy job here, whose pods run within seconds.
	podsReadyTimeout = 15 * time.Second
	// stopNotice is the manager's notice before it stops a running pod.
	stopNotice = 3 * time.Second
	// Priority classes of the preemption scenario, both below online work.
	lowPriority  = "kueue-suite-low"
	highPriority = "kueue-suite-high"
)

func TestMain(m *testing.M) {
	setup := framework.Setup{Name: "kueue", Controllers: "garbage-collector-controller,namespace-controller", Scheduler: true, Kwok: true}
	os.Exit(framework.Run(m, setup, prepare))
}

// prepare runs Kueue and the manager, then makes the nodes, the priority
// classes and Kueue's flavor.
func prepare(s *framework.Suite) error {
	apiServer = s.APIServer
	if _, err := s.StartKueue(apiServer, &kueue.WaitForPodsReady{Timeout: podsReadyTimeout, Backoff: time.Second}); err != nil {
		return err
	}
	opts := framework.ManagerOptions()
	opts.StopNotice = stopNotice
	// Kueue counts quota from the templates' requests, whatever the pods
	// then run on; the suite keeps the pods' requests as they are.
	opts.Reclaim = false
	if err := opts.Validate(); err != nil {
		return err
	}
	s.StartManager(apiServer.Env.Config, opts)
	return createFixtures()
}

// Nodes: training nodes carry poolLabel and the taint poolTaint, so that
// only pods Kueue admitted through the suite's ResourceFlavor (which adds
// the node selector and the toleration) land on them.
const (
	poolLabel = "backfill.dev/pool"
	poolValue = "training"
	poolTaint = "backfill.dev/training"
	nodeCount = 2
)

func createFixtures() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range nodeCount {
		node := simkwok.NodeObject(simkwok.NodeSpec{
			Name: fmt.Sprintf("sim-pool-%d", i),
			CPU:  resource.MustParse("32"), Memory: resource.MustParse("128Gi"),
			Labels: map[string]string{poolLabel: poolValue},
		})
		node.Spec.Taints = []corev1.Taint{{Key: poolTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
		if err := apiServer.Client.Create(ctx, node); err != nil {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
	}
	for name, value := range map[string]int32{lowPriority: -100, highPriority: -50} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if err := apiServer.Client.Create(ctx, pc); err != nil {
			return fmt.Errorf("creating PriorityClass %s: %w", name, err)
		}
	}
	return createFlavor(ctx)
}
