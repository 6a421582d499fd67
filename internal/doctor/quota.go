package doctor

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// checkQuota finds the active jobs whose pods are missing because a
// ResourceQuota of their namespace has no room for one more: the
// apiserver refuses such a pod ("exceeded quota"), so it never appears
// and the job waits. Scoped quotas are left out: whether they apply
// depends on the pod's priority class or QoS.
func checkQuota(s *Snapshot, jobs []*kubeflowv1.TFJob) []Result {
	return checkRefused(s, jobs, refusal{
		check: CheckResourceQuota, eventText: "exceeded quota",
		reasons: func(j *kubeflowv1.TFJob) []string {
			var over []string
			for i := range s.Quotas {
				q := &s.Quotas[i]
				if q.Namespace == j.Namespace && len(q.Spec.Scopes) == 0 && q.Spec.ScopeSelector == nil {
					over = append(over, quotaShortfalls(q, j)...)
				}
			}
			return over
		},
		fix: func(j *kubeflowv1.TFJob) string {
			return "raise the quota (kubectl edit resourcequota -n " + j.Namespace + "), wait for other work in the namespace to finish, or request less per pod"
		},
		okMessage: "no TFJob pod is held back by a ResourceQuota",
	})
}

// quotaShortfalls says, for each resource of the quota, whether the
// largest pod of the job would push it over its hard limit.
func quotaShortfalls(q *corev1.ResourceQuota, j *kubeflowv1.TFJob) []string {
	requests, limits := largestTemplate(j)
	var out []string
	for _, name := range sortedNames(q.Status.Hard) {
		hard := q.Status.Hard[name]
		need, counted := quotaNeed(name, requests, limits)
		if !counted || need.IsZero() {
			continue
		}
		used := q.Status.Used[name]
		total := used.DeepCopy()
		total.Add(need)
		if total.Cmp(hard) > 0 {
			out = append(out, fmt.Sprintf("ResourceQuota %s: %s used %s of %s, a pod needs %s more", q.Name, name, show(used), show(hard), show(need)))
		}
	}
	return out
}

// quotaNeed is what one pod adds to a quota resource: "pods" counts 1,
// "requests.X" and plain cpu/memory count requests, "limits.X" limits.
func quotaNeed(name corev1.ResourceName, requests, limits corev1.ResourceList) (resource.Quantity, bool) {
	n := string(name)
	switch {
	case n == "pods" || n == "count/pods":
		return *resource.NewQuantity(1, resource.DecimalSI), true
	case strings.HasPrefix(n, "requests."):
		return requests[corev1.ResourceName(strings.TrimPrefix(n, "requests."))], true
	case strings.HasPrefix(n, "limits."):
		return limits[corev1.ResourceName(strings.TrimPrefix(n, "limits."))], true
	case n == "cpu" || n == "memory" || n == "ephemeral-storage":
		return requests[name], true
	}
	return resource.Quantity{}, false
}

// largestTemplate is the requests and limits of the job's largest pod
// template, by each resource.
func largestTemplate(j *kubeflowv1.TFJob) (requests, limits corev1.ResourceList) {
	requests, limits = corev1.ResourceList{}, corev1.ResourceList{}
	for _, spec := range j.Spec.TFReplicaSpecs {
		if spec == nil {
			continue
		}
		maxInto(requests, templateRequests(&spec.Template.Spec))
		lim := corev1.ResourceList{}
		for i := range spec.Template.Spec.Containers {
			addList(lim, spec.Template.Spec.Containers[i].Resources.Limits)
		}
		maxInto(limits, lim)
	}
	return requests, limits
}

func maxInto(into, from corev1.ResourceList) {
	for name, q := range from {
		if cur, ok := into[name]; !ok || q.Cmp(cur) > 0 {
			into[name] = q.DeepCopy()
		}
	}
}

// refusalEvent is the newest Warning event about the job or its pods whose
// message contains what, e.g. a FailedCreate event another controller
// recorded with the apiserver's refusal.
func refusalEvent(s *Snapshot, j *kubeflowv1.TFJob, what string) string {
	var found string
	var newest corev1.Event
	for _, e := range s.Events {
		if e.Namespace != j.Namespace || e.Type != corev1.EventTypeWarning || !strings.Contains(e.Message, what) {
			continue
		}
		if e.InvolvedObject.Name != j.Name && !strings.HasPrefix(e.InvolvedObject.Name, j.Name+"-") {
			continue
		}
		if found == "" || eventTime(&e).After(eventTime(&newest)) {
			found, newest = e.Message, e
		}
	}
	return found
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// blockedByPriorityClass: the operator holds the job because a
// PriorityClass it names is missing (reported by its own check).
func blockedByPriorityClass(j *kubeflowv1.TFJob) bool {
	c := findCondition(j, kubeflowv1.JobCreated)
	return c != nil && c.Status == corev1.ConditionFalse && c.Reason == reasonPriorityClassNotFound
}

// reasonPriorityClassNotFound is the reason of the operator's Created
// condition and event when a job names a PriorityClass that does not exist.
const reasonPriorityClassNotFound = "PriorityClassNotFound"
