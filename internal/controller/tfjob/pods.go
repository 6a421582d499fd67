package tfjob

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// podOptions are the settings that shape every pod.
type podOptions struct {
	// clusterDomain is appended to service names in TF_CONFIG, if set.
	clusterDomain string
	// offlinePriorityClass is the PriorityClass of pods that name none.
	offlinePriorityClass string
	// gracePeriod is the terminationGracePeriodSeconds of pods whose
	// template sets none: time for training to save a checkpoint.
	gracePeriod *int64
	// podGroup, when set, joins the pod to the job's gang of the gang
	// scheduler gang; gangSchedulerName names scheduler-plugins' scheduler.
	podGroup          string
	gang              colocation.GangScheduler
	gangSchedulerName string
	// reclaim moves the pods' cpu and memory to reclaimed capacity, unless
	// the job opts out, shaped for the namespace's LimitRanges (rules).
	reclaim bool
	rules   colocation.ContainerRules
	// reports, when set, lets the tensorflow container report progress.
	reports *ReportAccess
}

// podFor builds the pod of one replica from its template: our labels, the
// owner reference, the restart policy of the replica, TF_CONFIG and
// tfjob-port on the tensorflow container, and, with reclaim, batch
// resources in place of cpu and memory.
func podFor(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, index int, opts podOptions) (*corev1.Pod, error) {
	spec := job.Spec.TFReplicaSpecs[rtype]
	template := spec.Template.DeepCopy()

	podLabels := template.Labels
	if podLabels == nil {
		podLabels = map[string]string{}
	}
	for k, v := range replicaLabels(job.Name, rtype, index) {
		podLabels[k] = v
	}
	if isMasterRole(job.Spec.TFReplicaSpecs, rtype, index) {
		podLabels[kubeflowv1.JobRoleLabel] = kubeflowv1.JobRoleMaster
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            replicaName(job.Name, rtype, index),
			Namespace:       job.Namespace,
			Labels:          podLabels,
			Annotations:     template.Annotations,
			OwnerReferences: []metav1.OwnerReference{ownerReference(job)},
			Finalizers:      []string{trackingFinalizer},
		},
		Spec: template.Spec,
	}
	pod.Spec.RestartPolicy = podRestartPolicy(spec.RestartPolicy)
	// Kubeflow v1 never copied schedulingPolicy.priorityClass to the pods.
	pod.Spec.PriorityClassName = colocation.ReplicaPriorityClass(job, rtype, opts.offlinePriorityClass)
	if pod.Spec.TerminationGracePeriodSeconds == nil && opts.gracePeriod != nil {
		grace := *opts.gracePeriod
		pod.Spec.TerminationGracePeriodSeconds = &grace
	}
	joinGang(pod, opts)
	if opts.reclaim && colocation.OnReclaimedCapacity(job.Annotations) {
		original, err := colocation.ToBatchResources(&pod.Spec, opts.rules)
		if err != nil {
			return nil, err
		}
		if original != "" {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[colocation.OriginalResourcesAnnotation] = original
		}
	}

	var tfConfig string
	if isDistributed(job) {
		var err error
		if tfConfig, err = tfConfigFor(job, rtype, index, opts.clusterDomain); err != nil {
			return nil, err
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if c.Name != kubeflowv1.ContainerName {
			continue
		}
		c.Ports = withDefaultPort(c.Ports)
		withNoticeVolume(&pod.Spec, c)
		withReportAccess(job, &pod.Spec, c, opts.reports)
		if tfConfig != "" {
			c.Env = append(c.Env, corev1.EnvVar{Name: "TF_CONFIG", Value: tfConfig})
		}
	}
	return pod, nil
}

// podRestartPolicy maps a replica's restart policy onto the pod: under
// ExitCode the pod never restarts in place, the operator decides.
func podRestartPolicy(p kubeflowv1.RestartPolicy) corev1.RestartPolicy {
	switch p {
	case kubeflowv1.RestartPolicyAlways:
		return corev1.RestartPolicyAlways
	case kubeflowv1.RestartPolicyOnFailure:
		return corev1.RestartPolicyOnFailure
	default:
		return corev1.RestartPolicyNever
	}
}

// withDefaultPort adds tfjob-port 2222 unless a port of that name exists.
func withDefaultPort(ports []corev1.ContainerPort) []corev1.ContainerPort {
	names := sets.New[string]()
	for _, p := range ports {
		names.Insert(p.Name)
	}
	if names.Has(kubeflowv1.PortName) {
		return ports
	}
	return append(ports, corev1.ContainerPort{Name: kubeflowv1.PortName, ContainerPort: kubeflowv1.DefaultPort, Protocol: corev1.ProtocolTCP})
}

// ownerReference makes the job the controller of a pod or service, so that
// deleting the job deletes them (garbage collection) and they wake it.
func ownerReference(job *kubeflowv1.TFJob) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion:         kubeflowv1.GroupVersion.String(),
		Kind:               kubeflowv1.Kind,
		Name:               job.Name,
		UID:                job.UID,
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}
