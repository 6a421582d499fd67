package tfjob

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// serviceFor builds the headless service of one replica; its DNS name is the
// replica's address in TF_CONFIG. Unlike Kubeflow v1 it publishes the pod's
// address before the pod is ready, so that replicas starting at the same
// moment resolve each other at once (v1 bug #1458).
func serviceFor(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, index int) *corev1.Service {
	spec := job.Spec.TFReplicaSpecs[rtype]
	var ports []corev1.ServicePort
	for _, p := range tensorflowPorts(spec) {
		ports = append(ports, corev1.ServicePort{
			Name:       p.Name,
			Port:       p.ContainerPort,
			TargetPort: intstr.FromInt32(p.ContainerPort),
			Protocol:   protocolOf(p),
		})
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            replicaName(job.Name, rtype, index),
			Namespace:       job.Namespace,
			Labels:          replicaLabels(job.Name, rtype, index),
			OwnerReferences: []metav1.OwnerReference{ownerReference(job)},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 replicaLabels(job.Name, rtype, index),
			Ports:                    ports,
			PublishNotReadyAddresses: true,
		},
	}
}

// protocolOf is the port's protocol, TCP when unset as in a pod spec.
func protocolOf(p corev1.ContainerPort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}
