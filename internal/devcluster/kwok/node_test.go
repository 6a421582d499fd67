package kwok

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeObject(t *testing.T) {
	cases := map[string]struct {
		spec NodeSpec
		want *corev1.Node
	}{
		"a CPU node gets the default pod count and no GPU resource": {
			spec: NodeSpec{Name: "cpu-0", CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi")},
			want: wantNode("cpu-0", NodeTypeCPU, nil, corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("16"),
				corev1.ResourceMemory: resource.MustParse("64Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			}),
		},
		"a GPU node counts its GPUs and is labelled gpu": {
			spec: NodeSpec{Name: "gpu-0", CPU: resource.MustParse("96"), Memory: resource.MustParse("768Gi"), Pods: 64, GPUs: 8},
			want: wantNode("gpu-0", NodeTypeGPU, nil, corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("96"),
				corev1.ResourceMemory: resource.MustParse("768Gi"),
				corev1.ResourcePods:   resource.MustParse("64"),
				GPUResource:           resource.MustParse("8"),
			}),
		},
		"extra labels are added and win over the defaults": {
			spec: NodeSpec{
				Name: "cpu-1", CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi"),
				Labels: map[string]string{"pool": "online", NodeTypeLabel: "special"},
			},
			want: wantNode("cpu-1", "special", map[string]string{"pool": "online"}, corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("4"),
				corev1.ResourceMemory: resource.MustParse("8Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := NodeObject(tc.spec)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("NodeObject (-want +got):\n%s", diff)
			}
			if len(got.Spec.Taints) != 0 {
				t.Errorf("taints = %v, want none: unchanged manifests must schedule", got.Spec.Taints)
			}
		})
	}
}

func TestNodeObjectDoesNotShareItsResourceLists(t *testing.T) {
	node := NodeObject(NodeSpec{Name: "n", CPU: resource.MustParse("1"), Memory: resource.MustParse("1Gi")})
	node.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("500m")
	if got := node.Status.Capacity[corev1.ResourceCPU]; got.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("changing allocatable changed capacity to %s", got.String())
	}
}

func wantNode(name, nodeType string, extra map[string]string, resources corev1.ResourceList) *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		NodeTypeLabel:            nodeType,
	}
	for k, v := range extra {
		labels[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		},
		Status: corev1.NodeStatus{Capacity: resources, Allocatable: resources.DeepCopy()},
	}
}
