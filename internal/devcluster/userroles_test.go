package devcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/backfill-dev/backfill/deploy/rbac"
)

// The local cluster installs what config/default does for users: the
// roles aggregated into edit (and admin) and view, and the cluster-wide
// reader whose name the commands give when a read is refused.
func TestUserRolesDecode(t *testing.T) {
	aggregated, err := decodeClusterRoles(rbac.TFJobRoles)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, r := range aggregated {
		got[r.Name] = map[string]string{}
		for k, v := range r.Labels {
			if k == "rbac.authorization.k8s.io/aggregate-to-admin" || k == "rbac.authorization.k8s.io/aggregate-to-edit" || k == "rbac.authorization.k8s.io/aggregate-to-view" {
				got[r.Name][k] = v
			}
		}
	}
	want := map[string]map[string]string{
		"backfill-tfjob-edit": {"rbac.authorization.k8s.io/aggregate-to-admin": "true", "rbac.authorization.k8s.io/aggregate-to-edit": "true"},
		"backfill-tfjob-view": {"rbac.authorization.k8s.io/aggregate-to-view": "true"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aggregation labels (-want +got):\n%s", diff)
	}
	view, err := decodeClusterRoles(rbac.ClusterView)
	if err != nil {
		t.Fatal(err)
	}
	if len(view) != 1 || view[0].Name != rbac.ClusterViewRole {
		t.Errorf("cluster-view.yaml holds %d role(s), want one, %s", len(view), rbac.ClusterViewRole)
	}
}

func TestDecodeClusterRolesRefusesOtherKinds(t *testing.T) {
	_, err := decodeClusterRoles([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
	if err == nil {
		t.Error("a ConfigMap decoded as a ClusterRole")
	}
}
