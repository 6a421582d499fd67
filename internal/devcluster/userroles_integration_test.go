//go:build integration

package devcluster

import (
	"context"
	"fmt"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/backfill-dev/backfill/test/framework"
)

// The roles the local cluster installs, on a real apiserver whose
// controller-manager aggregates them: the built-in edit and admin roles
// then let a user submit and delete TFJobs, view lets one read but not
// change them, and none lets one write a job's status. Installing again,
// as a restarted `backfill dev` does, changes nothing and fails nothing.
func TestUserRolesAggregateIntoBuiltInRoles(t *testing.T) {
	ctx := context.Background()
	api, err := framework.StartAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Stop() })
	cm, err := api.StartControllerManager(t.TempDir(), "clusterrole-aggregation-controller")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cm.Stop() })
	for range 2 {
		if err := installUserRoles(ctx, api.Client); err != nil {
			t.Fatalf("installing the users' roles: %v", err)
		}
	}

	// allowed asks the authorizer whether a user of the group bound to
	// role in team-a may do verb on TFJobs (subresource "status" for
	// their status) there.
	allowed := func(ctx context.Context, role, verb, subresource string) (bool, error) {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "someone", Groups: []string{"team-" + role},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "team-a", Verb: verb, Group: "kubeflow.org", Resource: "tfjobs", Subresource: subresource,
			},
		}}
		if err := api.Client.Create(ctx, review); err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	}
	if err := api.CreateNamespace(ctx, "team-a"); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"admin", "edit", "view"} {
		if err := bindGroup(ctx, api, "team-a", role); err != nil {
			t.Fatal(err)
		}
	}
	want := []struct {
		role, verb, subresource string
		allowed                 bool
	}{
		{"admin", "create", "", true}, {"admin", "delete", "", true},
		{"edit", "create", "", true}, {"edit", "patch", "", true}, {"edit", "delete", "", true}, {"edit", "watch", "", true},
		{"edit", "get", "status", true}, {"edit", "patch", "status", false}, {"edit", "update", "status", false},
		{"view", "list", "", true}, {"view", "get", "status", true},
		{"view", "create", "", false}, {"view", "patch", "", false}, {"view", "delete", "", false},
	}
	// The aggregation controller and the authorizer's cache catch up:
	// wait until every grant shows, then check every refusal.
	framework.Eventually(t, "the TFJob rights to be aggregated into admin, edit and view", func(ctx context.Context) (bool, error) {
		for _, w := range want {
			if !w.allowed {
				continue
			}
			if ok, err := allowed(ctx, w.role, w.verb, w.subresource); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	})
	for _, w := range want {
		ok, err := allowed(ctx, w.role, w.verb, w.subresource)
		if err != nil {
			t.Fatal(err)
		}
		if ok != w.allowed {
			t.Errorf("%s may %s tfjobs %s: %v, want %v", w.role, w.verb, w.subresource, ok, w.allowed)
		}
	}
}

// bindGroup binds the group team-<role> to the built-in ClusterRole role
// in namespace ns only, as a platform team gives a team its namespace.
func bindGroup(ctx context.Context, api *framework.APIServer, ns, role string) error {
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "team-" + role}},
	}
	if err := api.Client.Create(ctx, binding); err != nil {
		return fmt.Errorf("binding group team-%s to ClusterRole %s in %s: %w", role, role, ns, err)
	}
	return nil
}
