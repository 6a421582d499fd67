package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// refusal is an apiserver's Forbidden error as RBAC words it.
func refusal(verb, resource, group, scope string) error {
	gr := schema.GroupResource{Group: group, Resource: resource}
	return fmt.Errorf("listing TFJobs: %w", apierrors.NewForbidden(gr, "",
		fmt.Errorf(`User "system:serviceaccount:team-a:trainer" cannot %s resource %q in API group %q %s`, verb, resource, group, scope)))
}

func TestExplainForbidden(t *testing.T) {
	inTeamA := `in the namespace "team-a"`
	for name, tc := range map[string]struct {
		err   error
		wants []string // empty: the error comes back as it was
	}{
		"submitting as a viewer": {
			err:   refusal("patch", "tfjobs", "kubeflow.org", inTeamA),
			wants: []string{"the edit or admin role in namespace team-a", "docs/install.md#namespace-users-admin-edit-and-view"},
		},
		"reading TFJobs without a role": {
			err:   refusal("list", "tfjobs", "kubeflow.org", inTeamA),
			wants: []string{"the view, edit or admin role in namespace team-a", "userRoles.aggregate=false"},
		},
		"TFJobs of every namespace": {
			err:   refusal("list", "tfjobs", "kubeflow.org", "at the cluster scope"),
			wants: []string{"ClusterRoleBinding to the ClusterRole backfill-cluster-view", "-n NAMESPACE"},
		},
		"nodes": {
			err:   refusal("get", "nodes", "", "at the cluster scope"),
			wants: []string{"ClusterRoleBinding to the ClusterRole backfill-cluster-view"},
		},
		"a pod's log": {
			err:   refusal("get", "pods/log", "", inTeamA),
			wants: []string{"the view, edit or admin role in namespace team-a"},
		},
		"a write of something else": {err: refusal("create", "pods", "", inTeamA)},
		"a refusal not of RBAC's words": {
			err: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("exceeded quota")),
		},
		"not a refusal": {err: errors.New("connection refused")},
	} {
		t.Run(name, func(t *testing.T) {
			got := explainForbidden(tc.err)
			if !errors.Is(got, tc.err) {
				t.Errorf("the explained error no longer wraps the original: %v", got)
			}
			added := strings.TrimPrefix(got.Error(), tc.err.Error())
			if len(tc.wants) == 0 && added != "" {
				t.Errorf("added %q to %v, want nothing", added, tc.err)
			}
			for _, want := range tc.wants {
				if !strings.Contains(added, want) {
					t.Errorf("added %q, want %q in it", added, want)
				}
			}
			if strings.Contains(got.Error(), "\n") {
				t.Errorf("the error has more than one line: %q", got)
			}
		})
	}
}
