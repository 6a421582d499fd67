package doctor

import (
	"fmt"
	"regexp"
	"strings"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// checkPodCreate reports the active jobs whose pods the apiserver refused
// for a reason other than a ResourceQuota or a LimitRange: Pod Security
// admission, an admission webhook, an invalid template. The operator's
// FailedCreatePod event quotes the apiserver.
func checkPodCreate(refusals []jobRefusal) []Result {
	return refusalResults(refusals, CheckPodCreate, "the apiserver refused no TFJob pod for another reason")
}

// otherReasons is the job's last refusal when it names no quota or
// LimitRange rule.
func otherReasons(s *Snapshot, j *kubeflowv1.TFJob, ev *refusalEvent) []refusalReason {
	if ev == nil || len(ev.parsed.quotas) > 0 || len(eventLimits(ev, s.limitRangesOf(j.Namespace))) > 0 {
		return nil
	}
	// The operator's "creating pod NAME: " before the apiserver's words
	// says what the finding already does.
	msg := strings.TrimSpace(creatingPodPrefix.ReplaceAllString(ev.message, ""))
	return []refusalReason{{check: CheckPodCreate, status: StatusFail, seen: true, finding: msg, fix: otherFix(msg, j)}}
}

var creatingPodPrefix = regexp.MustCompile(`^creating pod \S+: `)

// otherFix is what to do about a refusal, by what the apiserver said.
func otherFix(msg string, j *kubeflowv1.TFJob) string {
	edit := fmt.Sprintf("kubectl edit tfjob %s -n %s", j.Name, j.Namespace)
	switch {
	case strings.Contains(msg, "violates PodSecurity"):
		return fmt.Sprintf("make the job's pod templates meet namespace %s's Pod Security level, changing what the message lists (%s), or ask its owner to relax the label pod-security.kubernetes.io/enforce", j.Namespace, edit)
	case strings.Contains(msg, "admission webhook") && strings.Contains(msg, "denied the request"):
		return fmt.Sprintf("the admission webhook the message names refused the pod: change the job's pod templates as it asks (%s), or ask the webhook's owner", edit)
	case strings.Contains(msg, "is invalid"):
		return fmt.Sprintf("correct the field the message names in the job's pod templates (%s)", edit)
	}
	return fmt.Sprintf("the message says why the pods were not created; correct the job's pod templates (%s) or what the message names, and the operator's next try creates them", edit)
}
