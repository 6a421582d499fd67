package doctor

import (
	"fmt"
	"strings"

	"github.com/backfill-dev/backfill/deploy/rbac"
)

// The cluster-wide reads a user with access to one namespace only is
// refused. Collect reads what it can without them, and the checks that
// need them (checklist) are skipped with the reason.
const (
	readAllPods         = "pods in every namespace"
	readNodes           = "nodes"
	readPriorityClasses = "priorityclasses"
	readLeases          = "leases in every namespace"
	readDeployments     = "deployments in every namespace"
	readStatefulSets    = "statefulsets in every namespace"
	readCRDs            = "customresourcedefinitions"
	readWorkloads       = "workloads.kueue.x-k8s.io"
)

// skipForAccess is the SKIP result of c when a read it needs was
// forbidden; skip is false when the check can run.
func skipForAccess(s *Snapshot, c checklistItem) (r Result, skip bool) {
	var refused []string
	for _, read := range c.needs {
		if s.Forbidden[read] {
			refused = append(refused, read)
		}
	}
	if len(refused) == 0 {
		return Result{}, false
	}
	return Result{
		Check: c.id, Status: StatusSkip,
		Finding: fmt.Sprintf("not checked: you may not list %s, which this check needs", strings.Join(refused, " or ")),
		Fix:     clusterViewFix(strings.Join(refused, " and ")),
	}, true
}

// clusterViewFix is how a user refused reads gets them: the ClusterRole
// backfill installs for doctor's cluster-wide reads, bound cluster-wide.
// The built-in view role grants none of nodes, PriorityClasses, Leases
// or CRDs, even in a ClusterRoleBinding.
func clusterViewFix(reads string) string {
	return "ask a cluster admin to bind you the ClusterRole " + rbac.ClusterViewRole + ", which backfill installs for doctor, cluster-wide: " +
		"kubectl create clusterrolebinding NAME --clusterrole=" + rbac.ClusterViewRole + " --user=YOU (or --serviceaccount=NAMESPACE:NAME); " +
		"or run doctor as a user who may get and list " + reads
}
