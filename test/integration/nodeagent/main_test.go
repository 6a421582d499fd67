//go:build integration

// Package nodeagent runs the node agent's memory evictions against a real
// kube-apiserver and etcd: the agent watches the pods bound to its node
// and evicts through the Eviction API, with the manager's ranking of
// TFJobs read from the cluster. Its node is a fake one, a cgroup v1 tree
// and a /proc in a temporary directory whose memory the test sets; no
// kubelet runs, so an evicted pod stays terminating, and the test plays
// the kubelet by writing pods' status. The restart test runs the built
// `backfill node-agent` on this machine's real cgroups instead, in a
// subtree of its own laid out as the kubelet lays out a node's.
package nodeagent

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/test/framework"
)

var (
	apiServer *framework.APIServer
	// backfillBin is the built backfill command.
	backfillBin string
	// clientset watches pods, to see the order of what the agent wrote.
	clientset kubernetes.Interface
)

func TestMain(m *testing.M) {
	if threads, err := strconv.Atoi(os.Getenv(spinEnv)); err == nil && threads > 0 {
		spin(threads) // a workload the restart test starts, not a test run
	}
	os.Exit(framework.Run(m, framework.Setup{Name: "node-agent", Backfill: true}, func(s *framework.Suite) error {
		apiServer, backfillBin = s.APIServer, s.Backfill
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
