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
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
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
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// controller-runtime drops the logs of a process that sets no logger
	// within 30 s of starting; set it first.
	ctrllog.SetLogger(zap.New(zap.WriteTo(&managerLog)))
	if _, err := os.Stat(helmBinary()); err != nil {
		fmt.Fprintf(os.Stderr, "install suite: %s is missing: run `make tools` (helm takes about 2 minutes the first time)\n", helmBinary())
		return 1
	}
	var err error
	if apiServer, err = framework.StartAPIServer(); err != nil {
		fmt.Fprintf(os.Stderr, "install suite: %v\n", err)
		return 1
	}
	defer func() { _ = apiServer.Stop() }()
	dir, err := os.MkdirTemp("", "backfill-install-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if kubeconfig, err = writeAdminKubeconfig(dir); err != nil {
		fmt.Fprintf(os.Stderr, "install suite: %v\n", err)
		return 1
	}
	return m.Run()
}

// writeAdminKubeconfig writes a kubeconfig of a system:masters user.
func writeAdminKubeconfig(dir string) (string, error) {
	user, err := apiServer.Env.AddUser(envtest.User{Name: "install-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("adding an admin user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// ctx is the context of a test's API calls.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*framework.Timeout)
	t.Cleanup(cancel)
	return c
}
