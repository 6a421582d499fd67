//go:build integration

// Package nodeagent runs the node agent's memory evictions against a real
// kube-apiserver and etcd: the agent watches the pods bound to its node
// and evicts through the Eviction API, with the manager's ranking of
// TFJobs read from the cluster. Its node is a fake one, a cgroup v1 tree
// and a /proc in a temporary directory whose memory the test sets; no
// kubelet runs, so an evicted pod stays terminating, and the test plays
// the kubelet by writing pods' status.
package nodeagent

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/test/framework"
)

var (
	apiServer *framework.APIServer
	// clientset watches pods, to see the order of what the agent wrote.
	clientset kubernetes.Interface
)

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{Name: "node-agent"}, func(s *framework.Suite) error {
		apiServer = s.APIServer
		var err error
		if clientset, err = kubernetes.NewForConfig(apiServer.Env.Config); err != nil {
			return err
		}
		// The class the manager makes, for the offline pods no TFJob controls.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return colocation.EnsureOfflinePriorityClass(ctx, apiServer.Client, colocation.DefaultOfflinePriorityClass, colocation.DefaultOfflinePriority)
	}))
}
