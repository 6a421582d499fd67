//go:build integration

// Package install checks the two ways of installing backfill: the Helm
// chart (charts/backfill) and the kustomize tree (config/). helm lint and
// helm template with several value sets against golden files; the
// kustomize install equal to the chart's defaults object by object; every
// rendering accepted by a real apiserver's server-side dry-run; and the
// manager running under exactly the chart's RBAC.
package install

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/backfill-dev/backfill/test/framework"
)

// update rewrites the golden files from the current chart:
//
//	go test -tags integration ./test/integration/install -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

var (
	apiServer *framework.APIServer
	// kubeconfig is a cluster-admin's kubeconfig of apiServer, for kubectl.
	kubeconfig string
	// managerLog holds what the manager of a test logged, shown when the
	// test fails.
	managerLog syncBuffer
)

func TestMain(m *testing.M) {
	flag.Parse()
	// controller-runtime drops the logs of a process that sets no logger
	// within 30 s of starting; set it first.
	ctrllog.SetLogger(zap.New(zap.WriteTo(&managerLog)))
	if _, err := os.Stat(helmBinary()); err != nil {
		fmt.Fprintf(os.Stderr, "install suite: %s is missing: run `make tools` (helm takes about 2 minutes the first time)\n", helmBinary())
		os.Exit(1)
	}
	os.Exit(framework.Run(m, framework.Setup{Name: "install"}, func(s *framework.Suite) error {
		apiServer = s.APIServer
		var err error
		kubeconfig, err = apiServer.AdminKubeconfig(s.Logs, "install-admin")
		return err
	}))
}

// ctx is the context of a test's API calls.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*framework.Timeout)
	t.Cleanup(cancel)
	return c
}
