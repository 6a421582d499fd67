package tfjob

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/intern"
)

// The manager's cache holds every pod and service the operator owns, so
// what it keeps of each decides how the manager's memory grows with the
// jobs. SlimPod and SlimService keep what the operator reads and drop the
// rest before an object is stored. Every reader of the cache (this
// controller's plan, its metrics, reclaimed capacity's unfittable-pod
// warnings, the progress endpoint's authorisation) reads the slim object,
// and its writes are patches and deletes by name and UID, never a
// full object written back: a field dropped here cannot be lost on the
// server. TestPlanPass and the other plan tests run on slim pods, so a
// field the plan needs that the transform drops fails them.

// SlimPod is the cache transform of pods: metadata without managed
// fields; of the spec, the node, the gang it joined and, until the pod is
// bound, what its requests are computed from (unfittable pods are warned
// about); of the status, the phase and reason, a DisruptionTarget
// condition and, until the pod is bound, the scheduler's PodScheduled
// condition (a job says why its pods wait), the start and each
// container's state and restarts. A Go pod struct costs far more
// than its JSON (a resource list is a map of Quantities), so what is not
// read is not kept.
func SlimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{
		TypeMeta:   pod.TypeMeta,
		ObjectMeta: slimMeta(pod.ObjectMeta),
		Spec:       corev1.PodSpec{NodeName: pod.Spec.NodeName, SchedulingGroup: pod.Spec.SchedulingGroup},
		Status: corev1.PodStatus{
			Phase:             pod.Status.Phase,
			Reason:            pod.Status.Reason,
			Conditions:        keptConditions(pod),
			StartTime:         pod.Status.StartTime,
			ContainerStatuses: slimContainerStatuses(pod.Status.ContainerStatuses),
		},
	}
	if pod.Spec.NodeName == "" {
		slim.Spec.Containers = containerRequests(pod.Spec.Containers)
		slim.Spec.InitContainers = containerRequests(pod.Spec.InitContainers)
		slim.Spec.Overhead = pod.Spec.Overhead
		slim.Spec.Resources = pod.Spec.Resources
	}
	return slim, nil
}

// SlimService is the cache transform of services: the operator reads only
// their metadata (name, owner, deletion).
func SlimService(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	return &corev1.Service{TypeMeta: svc.TypeMeta, ObjectMeta: slimMeta(svc.ObjectMeta)}, nil
}

func slimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	m.ManagedFields = nil
	intern.Meta(&m)
	return m
}

// containerRequests keeps what a pod's requests are computed from.
func containerRequests(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}, RestartPolicy: c.RestartPolicy}
	}
	return out
}

// keptConditions keeps the condition that says why the cluster ended a
// pod and, while the pod is not bound, the one that says why the
// scheduler has not placed it. The scheduler's message is the same for
// many waiting pods, so one copy is kept.
func keptConditions(pod *corev1.Pod) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		switch {
		case c.Type == corev1.DisruptionTarget:
			out = append(out, c)
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && pod.Spec.NodeName == "":
			c.Message = intern.String(c.Message)
			out = append(out, c)
		}
	}
	return out
}

// slimContainerStatuses keeps how each container ran and ended.
func slimContainerStatuses(ss []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(ss) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(ss))
	for i, s := range ss {
		out[i] = corev1.ContainerStatus{
			Name: s.Name, State: s.State, LastTerminationState: s.LastTerminationState, RestartCount: s.RestartCount,
		}
	}
	return out
}

// SlimTFJob is the cache transform of TFJobs: no managed fields, and a
// finished job without its pod templates. A finished job never creates a
// pod again; what is still read of it (the replica counts and restart
// policies, the run policy, the PriorityClass its metrics name) is kept,
// so that thousands of finished jobs kept for their history cost little.
// Its status is written through the status subresource, which ignores the
// spec.
func SlimTFJob(obj any) (any, error) {
	job, ok := obj.(*kubeflowv1.TFJob)
	if !ok {
		return obj, nil
	}
	job.ManagedFields = nil
	if !isFinished(&job.Status) {
		return job, nil
	}
	specs := make(map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, len(job.Spec.TFReplicaSpecs))
	for rtype, spec := range job.Spec.TFReplicaSpecs {
		if spec == nil {
			continue
		}
		slim := &kubeflowv1.ReplicaSpec{Replicas: spec.Replicas, RestartPolicy: spec.RestartPolicy}
		slim.Template.Spec.PriorityClassName = spec.Template.Spec.PriorityClassName
		specs[rtype] = slim
	}
	job.Spec.TFReplicaSpecs = specs
	return job, nil
}
