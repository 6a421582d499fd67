// Package clusterviewtest builds the pods that tests of the cluster view
// and of what is derived from it (the co-location metrics) classify.
package clusterviewtest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Resources is a resource list from name, quantity pairs.
func Resources(pairs ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		list[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return list
}

// Container is a container with the given requests and limits.
func Container(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

// Pod is a pod on node with the given containers, QoS class and phase.
func Pod(ns, name, node string, qos corev1.PodQOSClass, phase corev1.PodPhase, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: containers},
		Status:     corev1.PodStatus{Phase: phase, QOSClass: qos},
	}
}

// TFJobPod makes p a pod of the TFJob job, of replica type rtype.
func TFJobPod(p *corev1.Pod, job, rtype string) *corev1.Pod {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: job, Controller: ptr.To(true)}}
	p.Labels = map[string]string{kubeflowv1.ReplicaTypeLabel: rtype}
	return p
}
