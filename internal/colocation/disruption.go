package colocation

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Disruption reasons. The first five are the reasons Kubernetes writes on a
// pod's DisruptionTarget condition; DeletedWhileRunning is a pod deleted by
// anyone but the operator before it finished; ReclaimedForOnline is a pod
// the manager evicted because online pods needed its node's capacity.
const (
	ReasonPreemptionByScheduler  = "PreemptionByScheduler"
	ReasonEvictionByEvictionAPI  = "EvictionByEvictionAPI"
	ReasonDeletionByTaintManager = "DeletionByTaintManager"
	ReasonDeletionByPodGC        = "DeletionByPodGC"
	ReasonTerminationByKubelet   = "TerminationByKubelet"
	ReasonDeletedWhileRunning    = "DeletedWhileRunning"
	ReasonReclaimedForOnline     = "ReclaimedForOnline"
)

// The stop notice: before backfill itself stops a running offline pod, it
// annotates the pod with why (and, for the operator's own stops, when).
const (
	// StopReasonAnnotation says why the pod is being stopped, e.g.
	// TFJobSuspended, TFJobSucceeded or ReclaimedForOnline.
	StopReasonAnnotation = "backfill.dev/stop-reason"
	// StopAtAnnotation is when the pod will get SIGTERM, in RFC 3339.
	StopAtAnnotation = "backfill.dev/stop-at"
)

// StopNoticePatch is the JSON merge patch that writes a stop notice on a
// pod: why, and when it gets SIGTERM (in UTC, to the second); with reason
// "" it takes the notice off. A uid makes the pod's UID a precondition, so
// that a replacement of the same name is never noticed in its place.
func StopNoticePatch(uid types.UID, reason string, at time.Time) ([]byte, error) {
	var why, when any // null removes an annotation
	if reason != "" {
		why, when = reason, at.UTC().Format(time.RFC3339)
	}
	metadata := map[string]any{"annotations": map[string]any{StopReasonAnnotation: why, StopAtAnnotation: when}}
	if uid != "" {
		metadata["uid"] = uid
	}
	return json.Marshal(map[string]any{"metadata": metadata})
}

// kubeletStopReasons are the pod status reasons the kubelet writes when it
// stops a pod for the node's sake rather than the pod's: node-pressure
// eviction, critical-pod preemption and graceful node shutdown.
var kubeletStopReasons = map[string]bool{
	"Evicted":      true,
	"Preempting":   true,
	"Terminated":   true,
	"Shutdown":     true,
	"NodeShutdown": true,
}

// DisruptionOf reports whether a pod that ended was stopped by the cluster
// (preemption, eviction, node pressure or node loss) rather than by its own
// failure, and which reason says so. A disrupted pod is restarted under any
// restart policy and not charged to the job's backoffLimit.
func DisruptionOf(pod *corev1.Pod) (reason string, disrupted bool) {
	reason, disrupted = clusterDisruption(pod)
	if disrupted && pod.Annotations[StopReasonAnnotation] == ReasonReclaimedForOnline {
		return ReasonReclaimedForOnline, true
	}
	return reason, disrupted
}

// clusterDisruption is the reason the cluster gave for ending a pod.
func clusterDisruption(pod *corev1.Pod) (string, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			if c.Reason == "" {
				return ReasonTerminationByKubelet, true
			}
			return c.Reason, true
		}
	}
	if kubeletStopReasons[pod.Status.Reason] {
		return ReasonTerminationByKubelet, true
	}
	return "", false
}
