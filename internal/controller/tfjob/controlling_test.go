package tfjob

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// A pod or service wakes the TFJob its controller reference names, in its
// own namespace, and nothing else.
func TestControllingJob(t *testing.T) {
	job := &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "mnist", UID: "uid-1"}}
	controller := ownerReference(job)
	notController := ownerReference(job)
	notController.Controller = nil
	otherKind := ownerReference(job)
	otherKind.Kind = "PyTorchJob"
	otherGroup := ownerReference(job)
	otherGroup.APIVersion = "example.com/v1"
	badVersion := ownerReference(job)
	badVersion.APIVersion = "a/b/c"

	for _, tc := range []struct {
		name string
		obj  client.Object
		want []types.NamespacedName
	}{
		{"pod controlled by a TFJob", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "mnist-worker-0", OwnerReferences: []metav1.OwnerReference{controller}}}, []types.NamespacedName{{Namespace: testNamespace, Name: "mnist"}}},
		{"service controlled by a TFJob", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "mnist-worker-0", OwnerReferences: []metav1.OwnerReference{notController, controller}}}, []types.NamespacedName{{Namespace: testNamespace, Name: "mnist"}}},
		{"no owner", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "p"}}, nil},
		{"owned, not controlled", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "p", OwnerReferences: []metav1.OwnerReference{notController}}}, nil},
		{"controlled by another kind", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "p", OwnerReferences: []metav1.OwnerReference{otherKind}}}, nil},
		{"controlled by a TFJob of another group", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "p", OwnerReferences: []metav1.OwnerReference{otherGroup}}}, nil},
		{"an apiVersion that does not parse", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "p", OwnerReferences: []metav1.OwnerReference{badVersion}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []types.NamespacedName
			for _, req := range controllingJob(context.Background(), tc.obj) {
				got = append(got, req.NamespacedName)
			}
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Errorf("controllingJob = %v, want %v", got, tc.want)
			}
		})
	}
}
