//go:build integration

// Package rbac runs backfill's commands, and kubectl's, as namespace
// users: ServiceAccounts with real tokens whose only rights are the
// built-in admin, edit and view ClusterRoles as the apiserver bootstraps
// them, bound in one namespace, plus what deploy/rbac (config/default,
// the chart) aggregates into them, which kube-controller-manager's
// clusterrole-aggregation controller adds. A real kube-apiserver with
// RBAC authorization, kube-scheduler, kwok's simulated nodes and the
// manager in-process run the jobs.
package rbac

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

const (
	// managerNamespace holds the manager's Lease, which doctor looks for.
	managerNamespace = "backfill-system"
	node             = "sim-cpu-0"
)

var (
	apiServer *framework.APIServer
	// backfill is the binary under test; adminKubeconfig a cluster
	// admin's, for kubectl apply; logs the suite's directory.
	backfill, adminKubeconfig, logs string
)

func TestMain(m *testing.M) {
	setup := framework.Setup{
		Name: "rbac", Backfill: true, Scheduler: true, Kwok: true, KwokServeLogs: true,
		// The built-in admin, edit and view roles are aggregated: their
		// rules are the union of the ClusterRoles labelled for them,
		// which this controller writes.
		Controllers: "clusterrole-aggregation-controller",
	}
	os.Exit(framework.Run(m, setup, prepare))
}

func prepare(s *framework.Suite) error {
	apiServer, backfill, logs = s.APIServer, s.Backfill, s.Logs
	var err error
	if adminKubeconfig, err = apiServer.AdminKubeconfig(s.Logs, "admin"); err != nil {
		return err
	}
	if err := installUserRoles(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := waitForAggregation(ctx); err != nil {
		return err
	}
	if err := apiServer.CreateNamespace(ctx, managerNamespace); err != nil {
		return err
	}
	spec := simkwok.NodeSpec{Name: node, CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi")}
	if err := apiServer.Client.Create(ctx, simkwok.NodeObject(spec)); err != nil {
		return fmt.Errorf("creating node %s: %w", node, err)
	}
	opts := framework.ManagerOptions()
	opts.LeaderElect, opts.LeaderElectionNamespace = true, managerNamespace
	// No usage source runs here: pods keep their requests.
	opts.Reclaim = false
	s.StartManager(apiServer.Env.Config, opts)
	return nil
}

// installUserRoles applies deploy/rbac as an install does (config/default
// includes it; the install suite proves the chart's the same).
func installUserRoles() error {
	dir := filepath.Join(framework.RepoRoot(), "deploy", "rbac")
	cmd := exec.Command(filepath.Join(framework.BinDir(), "kubectl"), "--kubeconfig", adminKubeconfig,
		"apply", "--server-side", "--field-manager=backfill-rbac-test", "-k", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply -k %s: %w\n%s", dir, err, out)
	}
	return nil
}

// waitForAggregation waits until the built-in roles hold the TFJob rights
// deploy/rbac gives them: admin and edit may patch TFJobs, view may list
// them.
func waitForAggregation(ctx context.Context) error {
	want := map[string]string{"admin": "patch", "edit": "patch", "view": "list"}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for role, verb := range want {
			var cr rbacv1.ClusterRole
			if err := apiServer.Client.Get(ctx, client.ObjectKey{Name: role}, &cr); err != nil {
				return false, err
			}
			if !grants(cr.Rules, verb, "tfjobs") {
				last = fmt.Sprintf("ClusterRole %s does not yet grant %s on tfjobs", role, verb)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the TFJob rights to be aggregated: %w (%s)", err, last)
	}
	return nil
}

// grants reports whether a rule of rules allows verb on the kubeflow.org
// resource.
func grants(rules []rbacv1.PolicyRule, verb, resource string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, "kubeflow.org") && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}
