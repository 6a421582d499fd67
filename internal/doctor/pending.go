package doctor

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// insufficient finds the resources the scheduler's message names, e.g.
// "0/5 nodes are available: 3 Insufficient nvidia.com/gpu, 2 Insufficient cpu."
var insufficient = regexp.MustCompile(`Insufficient ([A-Za-z0-9./_-]*[A-Za-z0-9])`)

// noNodeMatches finds the scheduler's reasons that no waiting ends: the
// pod's constraints exclude the nodes. Other reasons without an
// insufficient resource (a gang still gathering, a preemption under way)
// may pass, so they are only a WARN.
var noNodeMatches = regexp.MustCompile(`(?i)didn't match|node affinity|node selector|untolerated taint|didn't find available persistent volumes|unbound immediate PersistentVolumeClaims`)

// unschedulable is a pod the scheduler tried and could not place, with
// its message.
func unschedulable(p *corev1.Pod) (string, bool) {
	if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil {
		return "", false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message, true
		}
	}
	return "", false
}

// checkPending explains every unschedulable pod of the active jobs: for
// each resource the scheduler found insufficient, what one pod needs
// against the most that is free, and could ever be free, on one node. A
// job that needs more than any node has is a FAIL (it never starts); one
// that waits for online work to leave room is a WARN, since waiting for
// idle capacity is what offline work does.
func checkPending(s *Snapshot, jobs []*kubeflowv1.TFJob) []Result {
	nodes := freeOnNodes(s.Nodes, s.Pods)
	var out []Result
	for _, j := range jobs {
		var pending []*corev1.Pod
		var message string
		for _, p := range s.jobPods(j) {
			if msg, ok := unschedulable(p); ok {
				pending = append(pending, p)
				message = msg
			}
		}
		if len(pending) == 0 {
			continue
		}
		out = append(out, explainPending(j, pending, message, nodes))
	}
	if len(out) == 0 {
		return []Result{ok(CheckPendingResources, "no TFJob pod waits for the scheduler")}
	}
	return out
}

// explainPending is the finding for one job's unschedulable pods; the
// pods of a job are alike enough that the largest one speaks for all.
func explainPending(j *kubeflowv1.TFJob, pending []*corev1.Pod, message string, nodes []nodeFree) Result {
	r := Result{Check: CheckPendingResources, Object: jobRef(j), Status: StatusWarn}
	names := insufficientResources(message)
	if len(names) == 0 {
		r.Finding = fmt.Sprintf("%d pod(s) cannot be scheduled (e.g. %s): %s", len(pending), pending[0].Name, strings.TrimSpace(message))
		r.Fix = "read the scheduler's reasons above: a node selector, affinity or taint that no node satisfies must be changed in the job's pod template, or nodes added that match it"
		if noNodeMatches.MatchString(message) {
			r.Status = StatusFail
		}
		return r
	}
	var parts, never, later []string
	for _, name := range names {
		need := largestRequest(pending, name)
		free, alloc := mostFree(nodes, name)
		parts = append(parts, fmt.Sprintf("needs %s %s per pod; the most free on any node is %s (the largest node has %s)", show(need), name, show(free), show(alloc)))
		if need.Cmp(alloc) > 0 {
			never = append(never, fmt.Sprintf("lower the %s request to at most %s per pod (split the work over more replicas) or add nodes with more %s", name, show(alloc), name))
		} else {
			later = append(later, string(name))
		}
	}
	r.Finding = fmt.Sprintf("%d pod(s) Pending (e.g. %s): %s", len(pending), pending[0].Name, strings.Join(parts, "; "))
	if len(never) > 0 {
		r.Status = StatusFail
		r.Finding += ": no node can ever fit a pod"
		r.Fix = strings.Join(never, "; ")
		return r
	}
	r.Finding += ": the pods start when online work frees room"
	r.Fix = fmt.Sprintf("nothing is broken: offline work waits for idle %s; to start sooner, request less per pod or add capacity", strings.Join(later, ", "))
	return r
}

// insufficientResources are the resources a scheduler message calls
// insufficient, once each, in order.
func insufficientResources(message string) []corev1.ResourceName {
	var names []corev1.ResourceName
	for _, m := range insufficient.FindAllStringSubmatch(message, -1) {
		name := corev1.ResourceName(m[1])
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

func largestRequest(pods []*corev1.Pod, name corev1.ResourceName) resource.Quantity {
	var most resource.Quantity
	for _, p := range pods {
		if q, ok := podRequests(p)[name]; ok && q.Cmp(most) > 0 {
			most = q.DeepCopy()
		}
	}
	return most
}
