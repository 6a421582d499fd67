package cli

import (
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/backfill-dev/backfill/deploy/rbac"
)

// rbacRefusal is the part of an apiserver's Forbidden message that names
// what RBAC refused: the verb, the resource, its API group, and the
// namespace or the cluster scope.
var rbacRefusal = regexp.MustCompile(`cannot (\S+) resource "([^"]*)" in API group "([^"]*)" (?:in the namespace "([^"]*)"|at the cluster scope)`)

// explainForbidden adds to an apiserver's refusal which role grants what
// was refused, so that a namespace user knows what to ask for. Other
// errors, and refusals it cannot read, are returned as they are.
func explainForbidden(err error) error {
	if err == nil || !apierrors.IsForbidden(err) {
		return err
	}
	m := rbacRefusal.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if hint := roleFor(m[1], m[2], m[3], m[4]); hint != "" {
		return fmt.Errorf("%w; %s", err, hint)
	}
	return err
}

// roleFor says which role grants verb on resource (of group) in
// namespace, "" for the cluster scope.
func roleFor(verb, resource, group, namespace string) string {
	const doc = " (docs/install.md#namespace-users-admin-edit-and-view)"
	tfjobs := group == "kubeflow.org" && strings.HasPrefix(resource, "tfjobs")
	read := verb == "get" || verb == "list" || verb == "watch"
	switch {
	case namespace == "" && tfjobs:
		return "reading the TFJobs of every namespace needs a ClusterRoleBinding to the ClusterRole " + rbac.ClusterViewRole +
			", which backfill installs for it: ask a cluster admin, or read one namespace with -n NAMESPACE" + doc
	case namespace == "":
		return "that is a read beyond one namespace: ask a cluster admin for a ClusterRoleBinding to the ClusterRole " + rbac.ClusterViewRole +
			", which backfill installs for it" + doc
	case tfjobs && !read:
		return "submitting and changing TFJobs needs the edit or admin role in namespace " + namespace +
			" (a RoleBinding to the ClusterRole edit or admin), which backfill's install extends to TFJobs" + doc
	case tfjobs:
		return "reading TFJobs needs the view, edit or admin role in namespace " + namespace +
			", which backfill's install extends to TFJobs unless installed with userRoles.aggregate=false" + doc
	case read:
		return "reading it needs the view, edit or admin role in namespace " + namespace + doc
	}
	return ""
}
