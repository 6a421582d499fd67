// Command localcluster starts a real kube-apiserver, etcd and
// kube-controller-manager on loopback (the binaries of bin/), installs the
// TFJob CRD, applies the example TFJobs and runs the backfill manager
// against them until Ctrl-C. It has no nodes, so pods stay Pending: it
// shows the operator's objects, not training. `make run` runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/test/framework"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctrl.SetLogger(zap.New())

	fmt.Println("Starting etcd, kube-apiserver and kube-controller-manager on 127.0.0.1 ...")
	api, err := framework.StartAPIServer()
	if err != nil {
		return err
	}
	defer func() { _ = api.Stop() }()
	dir, err := os.MkdirTemp("", "backfill-local-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kcm, err := api.StartControllerManager(dir, "garbage-collector-controller,namespace-controller")
	if err != nil {
		return err
	}
	defer func() { _ = kcm.Stop() }()

	kubeconfig, err := writeKubeconfig(api, dir)
	if err != nil {
		return err
	}
	if err := applyExamples(ctx, api); err != nil {
		return err
	}
	fmt.Printf("\nReady. In another shell:\n  export KUBECONFIG=%s\n  %s get tfjobs,pods,services -n ml-dev\n\nRunning the manager; Ctrl-C stops everything.\n\n",
		kubeconfig, filepath.Join(framework.BinDir(), "kubectl"))

	opts := manager.DefaultOptions()
	opts.MetricsAddress, opts.HealthAddress = "127.0.0.1:0", "0"
	return manager.RunWithConfig(ctx, api.Env.Config, opts)
}

// writeKubeconfig writes an admin kubeconfig for the local apiserver.
func writeKubeconfig(api *framework.APIServer, dir string) (string, error) {
	user, err := api.Env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// applyExamples creates the example TFJobs, unchanged, in their namespace.
func applyExamples(ctx context.Context, api *framework.APIServer) error {
	files, err := filepath.Glob(filepath.Join(framework.ExamplesDir(), "tfjob-*.yaml"))
	if err != nil {
		return err
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		job := &kubeflowv1.TFJob{}
		if err := yaml.UnmarshalStrict(data, job); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := api.CreateNamespace(ctx, job.Namespace); err != nil {
			return err
		}
		if err := api.Client.Create(ctx, job); err != nil {
			return fmt.Errorf("applying %s: %w", file, err)
		}
		fmt.Printf("Applied %s\n", filepath.Base(file))
	}
	return nil
}
