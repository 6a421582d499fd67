package latencysim

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// podBuilder builds a running pod for the tests.
type podBuilder struct{ p corev1.Pod }

func makePod(namespace, name, node string) *podBuilder {
	return &podBuilder{p: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(name + "-uid"), Annotations: map[string]string{}},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}}
}

// container adds a container requesting cpu (limit too unless "").
func (b *podBuilder) container(request, limit string) *podBuilder {
	c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
	if request != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(request)
	}
	if limit != "" {
		c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse(limit)
	}
	b.p.Spec.Containers = append(b.p.Spec.Containers, c)
	return b
}

func (b *podBuilder) uses(cpu string) *podBuilder { return b.annotate(kwok.UsageCPUAnnotation, cpu) }

func (b *podBuilder) objective(v string) *podBuilder {
	return b.annotate(colocation.LatencyObjectiveAnnotation, v)
}

func (b *podBuilder) annotate(k, v string) *podBuilder { b.p.Annotations[k] = v; return b }

func (b *podBuilder) phase(p corev1.PodPhase) *podBuilder { b.p.Status.Phase = p; return b }

func (b *podBuilder) obj() corev1.Pod { return b.p }

func cpuNode(name, cpu string) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
	}
}

// fakeLister serves fixed nodes and pods, or err.
type fakeLister struct {
	nodes []corev1.Node
	pods  []corev1.Pod
	err   error
}

func (f *fakeLister) Nodes(context.Context) ([]corev1.Node, error) { return f.nodes, f.err }
func (f *fakeLister) Pods(context.Context) ([]corev1.Pod, error)   { return f.pods, f.err }
