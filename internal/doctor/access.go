package doctor

import (
	"fmt"
	"strings"
)

// The cluster-wide reads a user with access to one namespace only is
// refused. Collect reads what it can without them, and the checks that
// need them are skipped with the reason.
const (
	readAllPods         = "pods in every namespace"
	readNodes           = "nodes"
	readPriorityClasses = "priorityclasses"
	readLeases          = "leases in every namespace"
	readDeployments     = "deployments in every namespace"
	readCRDs            = "customresourcedefinitions"
	readWorkloads       = "workloads.kueue.x-k8s.io"
)

// checkNeeds are the cluster-wide reads of each check that has some.
var checkNeeds = map[string][]string{
	CheckOperator:             {readLeases, readAllPods},
	CheckPriorityClassMissing: {readPriorityClasses},
	CheckPendingResources:     {readNodes, readAllPods},
	CheckOfflinePriority:      {readAllPods, readPriorityClasses},
	CheckGPUNodes:             {readNodes},
	CheckReclaimUsage:         {readNodes},
	CheckNodeAgent:            {readAllPods},
	CheckOnlineSignal:         {readNodes},
	CheckCRDMatch:             {readCRDs},
	CheckOtherController:      {readDeployments, readAllPods, readLeases},
	CheckKueueIntegration:     {readWorkloads},
	CheckKueueWaiting:         {readWorkloads},
}

// skipForAccess is the SKIP result of check when a read it needs was
// forbidden; ok is false when the check can run.
func skipForAccess(s *Snapshot, check string) (r Result, skip bool) {
	var refused []string
	for _, read := range checkNeeds[check] {
		if s.Forbidden[read] {
			refused = append(refused, read)
		}
	}
	if len(refused) == 0 {
		return Result{}, false
	}
	return Result{
		Check: check, Status: StatusSkip,
		Finding: fmt.Sprintf("not checked: you may not list %s, which this check needs", strings.Join(refused, " or ")),
		Fix:     "run doctor as a user who may get and list " + strings.Join(refused, " and ") + " (e.g. a cluster-wide view role)",
	}, true
}
