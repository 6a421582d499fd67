package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// whyPending says in plain words why a pod does not run yet, from its
// PodScheduled condition, its nominated node and its containers' waiting
// states; "" when it runs or has ended.
func whyPending(pod *corev1.Pod) string {
	if pod.DeletionTimestamp != nil {
		return whyTerminating(pod)
	}
	if pod.Status.Phase != corev1.PodPending {
		return ""
	}
	if pod.Spec.NodeName != "" {
		return whyNotStarted(pod)
	}
	if len(pod.Spec.SchedulingGates) > 0 {
		var gates []string
		for _, g := range pod.Spec.SchedulingGates {
			gates = append(gates, g.Name)
		}
		return "held back from scheduling by its scheduling gates (" + strings.Join(gates, ", ") + ")"
	}
	cond := podCondition(pod, corev1.PodScheduled)
	if cond == nil || cond.Status == corev1.ConditionTrue {
		return "waiting for the scheduler " + schedulerOf(pod) + " to place it"
	}
	reason := unschedulableInWords(pod, cond.Message)
	if pod.Status.NominatedNodeName != "" {
		reason += "; preempting lower-priority pods on " + pod.Status.NominatedNodeName + " to make room"
	}
	return reason
}

func schedulerOf(pod *corev1.Pod) string {
	if pod.Spec.SchedulerName == "" {
		return corev1.DefaultSchedulerName
	}
	return pod.Spec.SchedulerName
}

func podCondition(pod *corev1.Pod, ctype corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == ctype {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// whyCrashing explains a running pod whose container keeps failing, and
// where to read why; "" when none does.
func whyCrashing(pod *corev1.Pod, job string) string {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return ""
	}
	for _, cs := range pod.Status.ContainerStatuses {
		w := cs.State.Waiting
		if w == nil || w.Reason == "" {
			continue
		}
		msg := fmt.Sprintf("container %s is in %s, restarted %d times", cs.Name, w.Reason, cs.RestartCount)
		if last := cs.LastTerminationState.Terminated; last != nil {
			msg += fmt.Sprintf(", last exit code %d (%s)", last.ExitCode, last.Reason)
		}
		return msg + fmt.Sprintf("; see backfill logs %s --replica %s --previous", job, replicaName(pod))
	}
	return ""
}

// whyTerminating explains a pod on its way out, naming a disruption.
func whyTerminating(pod *corev1.Pod) string {
	if c := podCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		switch c.Reason {
		case "PreemptionByScheduler":
			return "preempted by a higher-priority pod; the operator recreates it, not counted as a failure"
		case "EvictionByEvictionAPI":
			return "evicted (e.g. kubectl drain); the operator recreates it, not counted as a failure"
		case "DeletionByTaintManager":
			return "evicted from a node that is not ready; the operator recreates it, not counted as a failure"
		}
		return "disrupted (" + c.Reason + "); the operator recreates it, not counted as a failure"
	}
	return "being deleted"
}

// whyNotStarted explains a pod bound to a node whose containers wait.
func whyNotStarted(pod *corev1.Pod) string {
	for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			msg := fmt.Sprintf("on %s, container %s waits: %s", pod.Spec.NodeName, cs.Name, w.Reason)
			if w.Message != "" {
				msg += ": " + w.Message
			}
			return msg
		}
	}
	return "placed on " + pod.Spec.NodeName + ", waiting for its node to start it"
}

// schedulerSummary matches "0/5 nodes are available: <reasons>."
var schedulerSummary = regexp.MustCompile(`^(\d+)/(\d+) nodes are available: (.*?)\.?(?: preemption: .*)?$`)

// unschedulableInWords turns the scheduler's message into what the user
// needs to know, leading with the resource the pod waits for.
func unschedulableInWords(pod *corev1.Pod, message string) string {
	if message == "" {
		return "the scheduler cannot place it yet"
	}
	m := schedulerSummary.FindStringSubmatch(message)
	if m == nil {
		if strings.Contains(message, "priorityclass") || strings.Contains(message, "PriorityClass") {
			return "missing PriorityClass: " + message
		}
		return "not schedulable: " + message
	}
	available, total := m[1], m[2]
	var headline string
	var details []string
	for _, part := range splitReasons(m[3]) {
		count, what := part.count, part.reason
		if res, ok := strings.CutPrefix(what, "Insufficient "); ok {
			if headline == "" {
				headline = fmt.Sprintf("waiting for %s: %s/%s nodes have %s", resourceWords(res), available, total, freeWords(pod, res))
			}
			details = append(details, fmt.Sprintf("%d with too little %s", count, res))
			continue
		}
		details = append(details, fmt.Sprintf("%d %s", count, nodeReasonInWords(what)))
	}
	if headline == "" {
		headline = fmt.Sprintf("no node fits: %s/%s nodes are available", available, total)
	}
	if len(details) > 0 {
		headline += " (" + strings.Join(details, ", ") + ")"
	}
	if strings.Contains(m[3], "Insufficient "+string(colocation.ResourceBatchCPU)) || strings.Contains(m[3], "Insufficient "+string(colocation.ResourceBatchMemory)) {
		headline += "; reclaimed capacity is what online pods request but do not use, and shrinks when their use rises: see backfill describe node NODE"
	}
	return headline
}

type nodeReason struct {
	count  int
	reason string
}

// splitReasons splits "2 Insufficient cpu, 3 node(s) had untolerated taint
// {a: b}" into its counted reasons.
func splitReasons(s string) []nodeReason {
	var out []nodeReason
	for _, part := range strings.Split(s, ", ") {
		countText, reason, ok := strings.Cut(strings.TrimSpace(part), " ")
		n, err := strconv.Atoi(countText)
		if !ok || err != nil {
			if len(out) > 0 { // a comma inside a reason
				out[len(out)-1].reason += ", " + part
			}
			continue
		}
		out = append(out, nodeReason{count: n, reason: reason})
	}
	return out
}

// nodeReasonInWords rewrites the scheduler's per-node reasons users meet.
func nodeReasonInWords(reason string) string {
	switch {
	case strings.HasPrefix(reason, "node(s) didn't match Pod's node affinity/selector"):
		return "do not match its node selector or affinity"
	case strings.HasPrefix(reason, "node(s) had untolerated taint"):
		taint := strings.TrimPrefix(strings.TrimPrefix(reason, "node(s) had untolerated taint"), "(s)")
		return "have a taint it does not tolerate" + taint
	case strings.HasPrefix(reason, "node(s) were unschedulable"):
		return "are cordoned"
	case strings.HasPrefix(reason, "Too many pods"):
		return "hold their maximum number of pods"
	}
	return strings.TrimPrefix(reason, "node(s) ")
}

// resourceWords names a resource for people.
func resourceWords(res string) string {
	switch {
	case strings.HasSuffix(res, "/gpu"):
		return "GPUs"
	case res == "cpu":
		return "CPU"
	case res == string(colocation.ResourceBatchCPU):
		return "reclaimed CPU"
	case res == string(colocation.ResourceBatchMemory):
		return "reclaimed memory"
	}
	return res
}

// freeWords says how much of res the pod needs free on a node, as the
// scheduler counts it (containers, the largest init container, overhead):
// "4 free nvidia.com/gpu", or reclaimed CPU, counted in milli-CPU, in the
// units of cpu.
func freeWords(pod *corev1.Pod, res string) string {
	q := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})[corev1.ResourceName(res)]
	switch corev1.ResourceName(res) {
	case colocation.ResourceBatchCPU:
		return fmt.Sprintf("%s CPU of reclaimed capacity free (%s)", colocation.CPUString(q.Value()), res)
	case colocation.ResourceBatchMemory:
		return fmt.Sprintf("%s of reclaimed memory free (%s)", q.String(), res)
	}
	return q.String() + " free " + res
}
