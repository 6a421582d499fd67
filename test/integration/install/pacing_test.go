//go:build integration

package install

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/manager"
)

// How the manager paces its requests, decided against a real apiserver's
// API Priority and Fairness: a system:masters user is exempt, so
// --kube-api-qps=0 falls back to the client-side bucket and -1 refuses to
// start; the chart's ServiceAccount lands in the chart's priority level and
// a cluster-admin outside system:masters in global-default, both paced by
// the server; a user who may not read the priority levels gets the bucket.
func TestPacing(t *testing.T) {
	decide := func(t *testing.T, cfg *rest.Config, qps float32) (manager.Pacing, error) {
		t.Helper()
		return manager.DecidePacing(ctx(t), cfg, qps, manager.FallbackBurst)
	}

	t.Run("system:masters", func(t *testing.T) {
		admin := apiServer.Env.Config // envtest's admin is in system:masters
		p, err := decide(t, admin, manager.QPSAuto)
		if err != nil {
			t.Fatal(err)
		}
		if p.Mode != manager.PacedByClient || p.QPS != manager.FallbackQPS || p.Burst != manager.FallbackBurst || !strings.Contains(p.Reason, `priority level "exempt"`) {
			t.Errorf("--kube-api-qps=0 as system:masters: %+v, want the fallback bucket because the level is exempt", p)
		}
		opts := manager.DefaultOptions()
		opts.QPS = manager.QPSNoLimit
		err = manager.RunWithConfig(ctx(t), admin, opts)
		if err == nil || !strings.Contains(err.Error(), `--kube-api-qps=-1: the apiserver puts the manager's requests in the exempt priority level "exempt"`) {
			t.Errorf("backfill manager --kube-api-qps=-1 as system:masters: %v, want a refusal naming the exempt level", err)
		}
	})

	t.Run("chart ServiceAccount", func(t *testing.T) {
		if err := apiServer.CreateNamespace(ctx(t), namespace); err != nil {
			t.Fatal(err)
		}
		apply(t, helmTemplate(t, valueSets["default"], "--show-only", "templates/serviceaccount.yaml",
			"--show-only", "templates/clusterrole.yaml", "--show-only", "templates/clusterrolebinding.yaml",
			"--show-only", "templates/flowcontrol.yaml"))
		sa := addUser(t, "system:serviceaccount:"+namespace+":backfill-manager",
			"system:serviceaccounts", "system:serviceaccounts:"+namespace)
		// The apiserver takes a moment to load a new FlowSchema.
		eventuallyPaced(t, sa, manager.QPSAuto, `priority level "backfill-manager"`)
		eventuallyPaced(t, sa, manager.QPSNoLimit, `priority level "backfill-manager"`)
	})

	t.Run("cluster-admin outside system:masters", func(t *testing.T) {
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "pacing-admin"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "pacing-admin"}},
		}
		if err := apiServer.Client.Create(ctx(t), binding); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		eventuallyPaced(t, addUser(t, "pacing-admin"), manager.QPSAuto, `priority level "global-default"`)
	})

	t.Run("may not read the priority levels", func(t *testing.T) {
		nobody := addUser(t, "pacing-nobody")
		p, err := decide(t, nobody, manager.QPSAuto)
		if err != nil {
			t.Fatal(err)
		}
		if p.Mode != manager.PacedByClient || p.QPS != manager.FallbackQPS || !strings.Contains(p.Reason, "may not list prioritylevelconfigurations") {
			t.Errorf("--kube-api-qps=0 unable to read the levels: %+v, want the fallback bucket", p)
		}
		p, err = decide(t, nobody, manager.QPSNoLimit)
		if err != nil {
			t.Fatal(err)
		}
		if p.Mode != manager.PacedByServer || !p.Unsure {
			t.Errorf("--kube-api-qps=-1 unable to read the levels: %+v, want no client-side limit, unsure", p)
		}
	})
}

// addUser is a user of the apiserver, authenticated, in the groups given.
func addUser(t *testing.T, name string, groups ...string) *rest.Config {
	t.Helper()
	user, err := apiServer.Env.AddUser(envtest.User{Name: name, Groups: append(groups, "system:authenticated")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return user.Config()
}

// eventuallyPaced waits until cfg's user is paced by the server with the
// given --kube-api-qps, for a reason that contains want.
func eventuallyPaced(t *testing.T, cfg *rest.Config, qps float32, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("--kube-api-qps=%v paced by the server in %s", qps, want), func(ctx context.Context) (bool, string, error) {
		p, err := manager.DecidePacing(ctx, cfg, qps, manager.FallbackBurst)
		if err != nil {
			return false, err.Error(), nil
		}
		return p.Mode == manager.PacedByServer && p.QPS < 0 && !p.Unsure && strings.Contains(p.Reason, want), fmt.Sprintf("%+v", p), nil
	})
}
