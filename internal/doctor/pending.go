package doctor

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

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
// idle capacity is what offline work does. Pods short of reclaimed
// capacity are told why the nodes publish so little (explainReclaimed).
func checkPending(s *Snapshot, jobs []*kubeflowv1.TFJob) []Result {
	nodes := freeOnNodes(s.Nodes, s.Pods)
	var out []Result
	for _, j := range jobs {
		var pending []*corev1.Pod
		var messages []string
		for _, p := range s.jobPods(j) {
			if msg, ok := unschedulable(p); ok {
				pending = append(pending, p)
				messages = append(messages, msg)
			}
		}
		if len(pending) == 0 {
			continue
		}
		example, message := telling(pending, messages)
		out = append(out, explainPending(j, pending, example, message, nodes, s.Now))
	}
	if len(out) == 0 {
		return []Result{ok(CheckPendingResources, "no TFJob pod waits for the scheduler")}
	}
	return out
}

// telling picks the message that best says why a job's pods wait, with
// its pod: one naming an insufficient resource, else one of constraints
// no node meets, else the last. The pods of a gang wait on one member:
// that member says what it lacks, the others only that the gang cannot be
// placed.
func telling(pending []*corev1.Pod, messages []string) (*corev1.Pod, string) {
	for _, match := range []func(string) bool{insufficient.MatchString, noNodeMatches.MatchString} {
		for i, m := range messages {
			if match(m) {
				return pending[i], m
			}
		}
	}
	last := len(pending) - 1
	return pending[last], messages[last]
}

// explainPending is the finding for one job's unschedulable pods; the
// pods of a job are alike enough that the largest one speaks for all, and
// the example's constraints choose the nodes that count.
// Reclaimed capacity (backfill.dev/batch-*) is explained apart, since
// what a node offers of it moves with online use.
func explainPending(j *kubeflowv1.TFJob, pending []*corev1.Pod, example *corev1.Pod, message string, nodes []nodeFree, now time.Time) Result {
	r := Result{Check: CheckPendingResources, Object: jobRef(j), Status: StatusWarn}
	names := insufficientResources(message)
	if len(names) == 0 {
		r.Finding = fmt.Sprintf("%d pod(s) cannot be scheduled (e.g. %s): %s", len(pending), example.Name, strings.TrimSpace(message))
		if noNodeMatches.MatchString(message) {
			r.Status = StatusFail
			r.Fix = "read the scheduler's reasons above: a node selector, affinity or taint that no node satisfies must be changed in the job's pod template, or nodes added that match it"
			return r
		}
		r.Fix = "this may pass by itself (a gang still gathering its pods, a preemption under way); if it lasts, `backfill describe " + j.Name + " -n " + j.Namespace + "` shows why each pod waits"
		return r
	}
	var parts, never, later []string
	var batch []corev1.ResourceName
	var allowed string
	if fit := allowedNodes(nodes, example); len(fit) < len(nodes) {
		allowed = fmt.Sprintf("on the %d of %d node(s) its node selector, affinity and tolerations allow, ", len(fit), len(nodes))
		nodes = fit
	}
	for _, name := range names {
		if isBatchResource(name) {
			batch = append(batch, name)
			continue
		}
		need := largestRequest(pending, name)
		free, alloc := mostFree(nodes, name)
		parts = append(parts, fmt.Sprintf("needs %s %s per pod; the most free on any node is %s (the largest node has %s)", show(need), name, show(free), show(alloc)))
		if need.Cmp(alloc) > 0 {
			never = append(never, fmt.Sprintf("lower the %s request to at most %s per pod (split the work over more replicas) or add nodes with more %s", name, show(alloc), name))
		} else {
			later = append(later, string(name))
		}
	}
	var fixes []string
	switch {
	case len(never) > 0:
		r.Status = StatusFail
		parts[len(parts)-1] += ": no node can ever fit a pod"
		fixes = never
	case len(later) > 0:
		parts[len(parts)-1] += ": the pods start when online work frees room"
		fixes = []string{fmt.Sprintf("nothing is broken: offline work waits for idle %s; to start sooner, request less per pod or add capacity", strings.Join(later, ", "))}
	}
	if len(batch) > 0 {
		reclaimed := explainReclaimed(pending, batch, nodes, now)
		parts = append(parts, reclaimed.finding)
		if reclaimed.fail {
			r.Status = StatusFail
		}
		fixes = append(fixes, reclaimed.fix)
	}
	r.Finding = fmt.Sprintf("%d pod(s) Pending (e.g. %s): %s%s", len(pending), example.Name, allowed, strings.Join(parts, "; "))
	r.Fix = strings.Join(fixes, "; ")
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
