//go:build integration

// Package tfjob runs the TFJob controller in-process against a real
// kube-apiserver and etcd, with kube-controller-manager's garbage collector,
// and drives pods the way a kubelet would: by writing their status.
package tfjob

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/test/framework"
)

var apiServer *framework.APIServer

// metricsURL is the manager's /metrics endpoint.
var metricsURL string

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{
		Name:        "tfjob",
		Controllers: "garbage-collector-controller,namespace-controller",
	}, func(s *framework.Suite) error {
		apiServer = s.APIServer
		port, err := framework.FreePort()
		if err != nil {
			return err
		}
		metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
		opts := framework.ManagerOptions()
		opts.MetricsAddress = fmt.Sprintf("127.0.0.1:%d", port)
		opts.StopNotice = stopNotice
		opts.RetireAfter = 0 // retire finished jobs at once, for TestRetire
		s.StartManager(apiServer.Env.Config, opts)
		return nil
	}))
}

var namespaceSeq atomic.Int64

// newNamespace creates a namespace for one test; the namespace controller
// removes it with its contents when the test ends.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	if name == "" {
		name = fmt.Sprintf("tfjob-%d", namespaceSeq.Add(1))
	}
	if err := apiServer.CreateNamespace(context.Background(), name); err != nil {
		t.Fatalf("Creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { deleteNamespace(t, name) })
	return name
}

// stopNotice is the manager's notice before it stops a running pod: short,
// so the suites stay fast, and long enough to see the notice first.
const stopNotice = 2 * time.Second
