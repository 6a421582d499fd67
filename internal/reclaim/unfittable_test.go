package reclaim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// reasons records the reasons of the events it is given.
type reasons []string

func (r *reasons) Eventf(_, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	*r = append(*r, reason)
}

func TestWarnUnfittable(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kubeflowv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	job := &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "big", UID: "uid-big"}}
	yes := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "big-worker-0", UID: types.UID("uid-pod"),
			Labels: map[string]string{kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind,
				Name: job.Name, UID: job.UID, Controller: &yes}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{colocation.ResourceBatchCPU: resource.MustParse("8000")}}}}},
	}
	for _, tc := range []struct {
		name string
		most Resources
		want int
	}{
		{"no node known: nothing to say", Resources{}, 0},
		{"every node too small", res(4000, 16), 1},
		{"a node large enough", res(16000, 64), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got reasons
			c := &Controller{client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(job, pod).Build(),
				recorder: &got, warned: map[string]bool{}}
			for range 2 { // each pod is told once
				if err := c.warnUnfittable(context.Background(), tc.most); err != nil {
					t.Fatal(err)
				}
			}
			if len(got) != tc.want {
				t.Errorf("events %v, want %d %s", got, tc.want, ReasonExceedsReclaimableCapacity)
			}
			for _, r := range got {
				if r != ReasonExceedsReclaimableCapacity {
					t.Errorf("event reason %s, want %s", r, ReasonExceedsReclaimableCapacity)
				}
			}
		})
	}
}
