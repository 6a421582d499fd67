package tfjob

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// reasonGangUnavailable is the event of a distributed job started without
// gang scheduling because the cluster offers none.
const reasonGangUnavailable = "GangSchedulingUnavailable"

// podGroupFor is the gang of a distributed job: Kubernetes' own PodGroup
// (scheduling.k8s.io/v1beta1, GenericWorkload feature gate), named after the
// job and owned by it. The scheduler binds at least minCount of its pods
// together or none, so a half-started job never sits on GPUs waiting for
// the rest. minCount is schedulingPolicy.minAvailable, else every replica.
// The scheduler requires the group's priority to be its pods'.
func podGroupFor(job *kubeflowv1.TFJob, priorityClass string) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Name:            job.Name,
			Namespace:       job.Namespace,
			Labels:          jobLabels(job.Name),
			OwnerReferences: []metav1.OwnerReference{ownerReference(job)},
		},
		Spec: schedulingv1beta1.PodGroupSpec{
			PriorityClassName: priorityClass,
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: gangSize(job)},
			},
		},
	}
}

// gangSize is how many pods must start together.
func gangSize(job *kubeflowv1.TFJob) int32 {
	var total int32
	for _, spec := range job.Spec.TFReplicaSpecs {
		total += replicas(spec)
	}
	if sp := job.Spec.RunPolicy.SchedulingPolicy; sp != nil && sp.MinAvailable != nil && *sp.MinAvailable < total {
		return *sp.MinAvailable
	}
	return total
}

// planGang decides how this pass's new pods are scheduled. A job that has
// no pod on a node yet starts as a gang; a replacement for one pod of a
// running job does not wait for a gang that already holds its place.
// Without gang support the job is told so, once, rather than pretending.
func (p *plan) planGang(job *kubeflowv1.TFJob, obs observed, pol policy, starting bool) {
	if len(p.createPods) == 0 || !isDistributed(job) {
		return
	}
	why := ""
	switch classes := priorityClassesOf(job, pol.offlinePriorityClass); {
	case !pol.gang:
		why = "the cluster serves no scheduling.k8s.io/v1beta1 PodGroup (turn on the GenericWorkload feature gate)"
	case len(classes) > 1:
		why = fmt.Sprintf("its replicas use different PriorityClasses (%s) and a gang has one", strings.Join(classes, ", "))
	default:
		p.podGroupClass = classes[0]
	}
	if why != "" {
		if starting {
			p.emit(corev1.EventTypeWarning, reasonGangUnavailable, jobMessage(job, fmt.Sprintf(
				"starts its %d pods without gang scheduling: %s, so some pods may run while others wait", gangSize(job), why)))
		}
		return
	}
	if !obs.hasPodGroup {
		p.createPodGroup = true
	}
	for _, pod := range obs.pods {
		if pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return
		}
	}
	p.gangPods = true
}
