package tfjob

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// reasonGangUnavailable is the event of a distributed job started without
// gang scheduling because the cluster offers none.
const reasonGangUnavailable = "GangSchedulingUnavailable"

// podGroupFor is the gang of a distributed job for the cluster's gang
// scheduler, named after the job and owned by it. The scheduler binds at
// least minCount (minMember) of its pods together or none, so a
// half-started job never sits on GPUs waiting for the rest. minCount is
// schedulingPolicy.minAvailable, else every replica. Kubernetes' own
// scheduler requires the group's priority to be its pods'.
func podGroupFor(job *kubeflowv1.TFJob, priorityClass string, gang colocation.GangScheduler) client.Object {
	meta := metav1.ObjectMeta{
		Name:            job.Name,
		Namespace:       job.Namespace,
		Labels:          jobLabels(job.Name),
		OwnerReferences: []metav1.OwnerReference{ownerReference(job)},
	}
	if gang == colocation.GangKubernetes {
		return &schedulingv1beta1.PodGroup{
			ObjectMeta: meta,
			Spec: schedulingv1beta1.PodGroupSpec{
				PriorityClassName: priorityClass,
				SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
					Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: gangSize(job)},
				},
			},
		}
	}
	spec := map[string]any{"minMember": int64(gangSize(job))}
	sp := job.Spec.RunPolicy.SchedulingPolicy
	if sp != nil && sp.MinResources != nil {
		resources := map[string]any{}
		for name, q := range *sp.MinResources {
			resources[string(name)] = q.String()
		}
		spec["minResources"] = resources
	}
	switch gang {
	case colocation.GangVolcano:
		spec["priorityClassName"] = priorityClass
		if sp != nil && sp.Queue != "" {
			spec["queue"] = sp.Queue
		}
	case colocation.GangSchedulerPlugins:
		if sp != nil && sp.ScheduleTimeoutSeconds != nil {
			spec["scheduleTimeoutSeconds"] = int64(*sp.ScheduleTimeoutSeconds)
		}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gang.PodGroupGVK())
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(meta.Labels)
	u.SetOwnerReferences(meta.OwnerReferences)
	return u
}

// EmptyPodGroup is an object to read a gang scheduler's PodGroup into.
func EmptyPodGroup(gang colocation.GangScheduler) client.Object {
	if gang == colocation.GangKubernetes {
		return &schedulingv1beta1.PodGroup{}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gang.PodGroupGVK())
	return u
}

// gangSize is how many pods must start together.
func gangSize(job *kubeflowv1.TFJob) int32 {
	total := job.TotalReplicas()
	if sp := job.Spec.RunPolicy.SchedulingPolicy; sp != nil && sp.MinAvailable != nil && *sp.MinAvailable < total {
		return *sp.MinAvailable
	}
	return total
}

// planGang decides how this pass's new pods are scheduled. A job that has
// no pod on a node yet starts as a gang; with kube-scheduler's own gang, a
// replacement for one pod of a running job does not wait for a gang that
// already holds its place.
// Without gang support the job is told so, once, rather than pretending.
func (p *plan) planGang(job *kubeflowv1.TFJob, obs observed, pol policy, starting bool) {
	if len(p.createPods) == 0 || !isDistributed(job) {
		return
	}
	why := ""
	switch classes := colocation.JobPriorityClasses(job, pol.offlinePriorityClass); {
	case pol.gang == colocation.GangNone:
		why = "the cluster serves no PodGroup of Kubernetes (turn on the GenericWorkload feature gate), Volcano or scheduler-plugins"
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
	if pol.gang != colocation.GangKubernetes {
		// Volcano and scheduler-plugins schedule every pod of the group and
		// count the members already running.
		p.gangPods = true
		return
	}
	for _, pod := range obs.pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		// A live pod outside the gang, bound or not yet, would leave the
		// new ones waiting for a member that never joins.
		if pod.Spec.NodeName != "" || pod.Spec.SchedulingGroup == nil {
			return
		}
	}
	p.gangPods = true
}

// joinGang makes a pod a member of its job's PodGroup, the way its gang
// scheduler expects: kube-scheduler reads spec.schedulingGroup; Volcano an
// annotation, scheduler-plugins a label, and both place only the pods
// that name their scheduler (the template's own schedulerName wins).
func joinGang(pod *corev1.Pod, opts podOptions) {
	if opts.podGroup == "" {
		return
	}
	group := opts.podGroup
	scheduler := ""
	switch opts.gang {
	case colocation.GangKubernetes:
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	case colocation.GangVolcano:
		pod.Annotations = withEntry(pod.Annotations, "scheduling.k8s.io/group-name", group)
		scheduler = "volcano"
	case colocation.GangSchedulerPlugins:
		pod.Labels = withEntry(pod.Labels, "scheduling.x-k8s.io/pod-group", group)
		scheduler = opts.gangSchedulerName
	}
	if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = scheduler
	}
}

func withEntry(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
