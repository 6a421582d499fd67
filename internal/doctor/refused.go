package doctor

import (
	"fmt"
	"strings"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// refusal is one admission check that refuses pods at creation, so that
// they never appear: a ResourceQuota or a LimitRange.
type refusal struct {
	check string
	// eventText finds the apiserver's refusal in the job's warning events,
	// for when reasons, worked out from the objects, find none.
	eventText string
	// reasons says why the job's pods are refused; nil when they are not.
	reasons   func(*kubeflowv1.TFJob) []string
	fix       func(*kubeflowv1.TFJob) string
	okMessage string
}

// checkRefused reports the active jobs missing pods for the refusal's
// reasons; jobs held back by a missing PriorityClass are left to that
// check.
func checkRefused(s *Snapshot, jobs []*kubeflowv1.TFJob, r refusal) []Result {
	var out []Result
	for _, j := range jobs {
		missing := s.missingPods(j)
		if missing == 0 || blockedByPriorityClass(j) {
			continue
		}
		reasons := r.reasons(j)
		if len(reasons) == 0 {
			if msg := refusalEvent(s, j, r.eventText); msg != "" {
				reasons = append(reasons, msg)
			}
		}
		if len(reasons) == 0 {
			continue
		}
		out = append(out, Result{
			Check: r.check, Status: StatusFail, Object: jobRef(j),
			Finding: fmt.Sprintf("%d of %d pod(s) not created: %s", missing, replicaCount(j), strings.Join(reasons, "; ")),
			Fix:     r.fix(j),
		})
	}
	if len(out) == 0 {
		return []Result{ok(r.check, r.okMessage)}
	}
	return out
}
