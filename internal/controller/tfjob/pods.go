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
	pod := &corev1.Pod{ObjectMeta: podMeta(job, rtype, index, template.ObjectMeta), Spec: template.Spec}
	pod.Spec.RestartPolicy = podRestartPolicy(spec.RestartPolicy)
	// Kubeflow v1 never copied schedulingPolicy.priorityClass to the pods.
	pod.Spec.PriorityClassName = colocation.ReplicaPriorityClass(job, rtype, opts.offlinePriorityClass)
	if pod.Spec.TerminationGracePeriodSeconds == nil && opts.gracePeriod != nil {
		grace := *opts.gracePeriod
		pod.Spec.TerminationGracePeriodSeconds = &grace
	}
	joinGang(pod, opts)
	if opts.reclaim && colocation.OnReclaimedCapacity(job.Annotations) {
		if err := onBatchResources(pod, opts.rules); err != nil {
			return nil, err
		}
	}
	if err := withTensorFlowContainer(job, rtype, index, &pod.Spec, opts); err != nil {
		return nil, err
	}
	return pod, nil
}

// podMeta is the pod's metadata: the template's labels and annotations,
// our replica labels, the master role, the owner and our finalizer.
func podMeta(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, index int, template metav1.ObjectMeta) metav1.ObjectMeta {
	labels := template.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range replicaLabels(job.Name, rtype, index) {
		labels[k] = v
	}
	if isMasterRole(job.Spec.TFReplicaSpecs, rtype, index) {
		labels[kubeflowv1.JobRoleLabel] = kubeflowv1.JobRoleMaster
	}
	return metav1.ObjectMeta{
		Name:            replicaName(job.Name, rtype, index),
		Namespace:       job.Namespace,
		Labels:          labels,
		Annotations:     template.Annotations,
		OwnerReferences: []metav1.OwnerReference{ownerReference(job)},
		Finalizers:      []string{trackingFinalizer},
	}
}

// onBatchResources moves the pod's cpu and memory to batch resources,
// shaped by rules, and keeps what it asked for in an annotation.
func onBatchResources(pod *corev1.Pod, rules colocation.ContainerRules) error {
	original, err := colocation.ToBatchResources(&pod.Spec, rules)
	if err != nil || original == "" {
		return err
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[colocation.OriginalResourcesAnnotation] = original
	return nil
}

// withTensorFlowContainer gives the tensorflow container its port, the
// stop notice volume, report access and, in a distributed job, TF_CONFIG.
func withTensorFlowContainer(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, index int, spec *corev1.PodSpec, opts podOptions) error {
	var tfConfig string
	if isDistributed(job) {
		var err error
		if tfConfig, err = tfConfigFor(job, rtype, index, opts.clusterDomain); err != nil {
			return err
		}
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name != kubeflowv1.ContainerName {
			continue
		}
		c.Ports = withDefaultPort(c.Ports)
		withNoticeVolume(spec, c)
		withReportAccess(job, spec, c, opts.reports)
		if tfConfig != "" {
			c.Env = append(c.Env, corev1.EnvVar{Name: "TF_CONFIG", Value: tfConfig})
		}
	}
	return nil
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
