package cli

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
)

// jobPods are the pods of each TFJob, by namespace/name of the job.
type jobPods map[string][]corev1.Pod

// listJobPods lists the TFJob pods of namespace ("" for all) once and
// groups them by job, so that a table of many jobs costs one request.
func listJobPods(ctx context.Context, c client.Client, namespace string) (jobPods, error) {
	var pods corev1.PodList
	opts := []client.ListOption{client.MatchingLabels{kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName}}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.List(ctx, &pods, opts...); err != nil {
		return nil, fmt.Errorf("listing the TFJobs' pods: %w", err)
	}
	byJob := jobPods{}
	for _, pod := range pods.Items {
		key := pod.Namespace + "/" + pod.Labels[kubeflowv1.JobNameLabel]
		byJob[key] = append(byJob[key], pod)
	}
	for _, pods := range byJob {
		sortPods(pods)
	}
	return byJob, nil
}

// of returns the pods of job.
func (p jobPods) of(job *kubeflowv1.TFJob) []corev1.Pod {
	return p[job.Namespace+"/"+job.Name]
}

// sortPods orders pods as the replica types are ordered, then by index.
func sortPods(pods []corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		ti, tj := typeRank(pods[i].Labels[kubeflowv1.ReplicaTypeLabel]), typeRank(pods[j].Labels[kubeflowv1.ReplicaTypeLabel])
		if ti != tj {
			return ti < tj
		}
		return replicaIndex(&pods[i]) < replicaIndex(&pods[j])
	})
}

// typeRank is the position of a lowercase replica type in
// kubeflowv1.ReplicaTypes; unknown types go last.
func typeRank(lower string) int {
	for i, t := range kubeflowv1.ReplicaTypes {
		if strings.EqualFold(string(t), lower) {
			return i
		}
	}
	return len(kubeflowv1.ReplicaTypes)
}

func replicaIndex(pod *corev1.Pod) int {
	i, err := strconv.Atoi(pod.Labels[kubeflowv1.ReplicaIndexLabel])
	if err != nil {
		return -1
	}
	return i
}

// replicaTypes are the job's replica types in kubeflowv1.ReplicaTypes order.
func replicaTypes(job *kubeflowv1.TFJob) []kubeflowv1.ReplicaType {
	var types []kubeflowv1.ReplicaType
	for rtype := range job.Spec.TFReplicaSpecs {
		types = append(types, rtype)
	}
	sort.Slice(types, func(i, j int) bool {
		return typeRank(string(types[i])) < typeRank(string(types[j]))
	})
	return types
}

// podReady reports whether a pod runs with its Ready condition True.
func podReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// jobState is the TFJob's state as kubectl's State column shows it: the
// type of its last condition that holds, or "Pending" before the operator
// has seen the job. CapacityPending is no state (kubectl's Waiting column
// shows it), and the operator keeps it first.
func jobState(job *kubeflowv1.TFJob) string {
	for i := len(job.Status.Conditions) - 1; i >= 0; i-- {
		if c := job.Status.Conditions[i]; c.Status == corev1.ConditionTrue && c.Type != kubeflowv1.JobCapacityPending {
			return string(c.Type)
		}
	}
	return "Pending"
}

// waitingFor is why the job's pods wait for capacity, as kubectl's
// Waiting column shows it: the reason of its CapacityPending condition;
// for a job GPU loans paused, colocation.ReasonGPUsReturnedToOnline;
// "<none>" when they do not.
func waitingFor(job *kubeflowv1.TFJob) string {
	if c := jobCondition(job, kubeflowv1.JobCapacityPending); c != nil && c.Status == corev1.ConditionTrue {
		return c.Reason
	}
	if _, ok := pausedByLoan(job); ok {
		return colocation.ReasonGPUsReturnedToOnline
	}
	return "<none>"
}

// jobCondition returns the job's condition of type ctype, or nil.
func jobCondition(job *kubeflowv1.TFJob, ctype kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == ctype {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// isDone reports whether the job has succeeded or failed.
func isDone(job *kubeflowv1.TFJob) bool {
	for _, t := range []kubeflowv1.JobConditionType{kubeflowv1.JobSucceeded, kubeflowv1.JobFailed} {
		if c := jobCondition(job, t); c != nil && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// jobRestarts counts the restarts charged to the job's backoffLimit, as
// the operator does: those of its status (pods recreated after failures)
// plus the container restarts of its live pods, which the status takes in
// only once such a pod is replaced.
func jobRestarts(job *kubeflowv1.TFJob, pods []corev1.Pod) int32 {
	n := job.Status.Restarts
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodFailed && pod.Status.Phase != corev1.PodSucceeded {
			n += tfjob.ContainerRestarts(pod)
		}
	}
	return n
}

// priorityClassOf is the PriorityClass the operator gives the job's pods
// (with the offline class by default); distinct classes are joined by
// commas.
func priorityClassOf(job *kubeflowv1.TFJob) string {
	return strings.Join(colocation.JobPriorityClasses(job, colocation.DefaultOfflinePriorityClass), ",")
}

// replicaName is how a user names one replica: "worker-0".
func replicaName(pod *corev1.Pod) string {
	return pod.Labels[kubeflowv1.ReplicaTypeLabel] + "-" + pod.Labels[kubeflowv1.ReplicaIndexLabel]
}
