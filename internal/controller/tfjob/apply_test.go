package tfjob

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// A pod the apiserver refuses (a ResourceQuota full) does not cancel its
// siblings' creates in flight: the quota may have charged them already,
// and a cancelled one would keep the charge without a pod.
func TestApplyRefusedPodCancelsNoSibling(t *testing.T) {
	job := makeJob("team").replicas(kubeflowv1.ReplicaTypeWorker, 2, kubeflowv1.RestartPolicyNever).obj()
	refused := make(chan struct{})
	var siblingCtxErr error
	cl := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetName() == "team-worker-1" {
				defer close(refused)
				return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, obj.GetName(), errors.New("exceeded quota: team"))
			}
			<-refused // charged, not yet stored, when the sibling fails
			siblingCtxErr = ctx.Err()
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	r := NewReconciler(cl, nil, nil, Options{})
	p := &plan{createPods: []replicaID{{kubeflowv1.ReplicaTypeWorker, 0}, {kubeflowv1.ReplicaTypeWorker, 1}}}
	if _, err := r.apply(context.Background(), job, p); !errors.Is(err, errCreatingPod) {
		t.Fatalf("apply: %v, want the refusal of team-worker-1", err)
	}
	if siblingCtxErr != nil {
		t.Errorf("team-worker-0's create was cancelled (%v) when team-worker-1 was refused", siblingCtxErr)
	}
	var pod corev1.Pod
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: "team-worker-0"}, &pod); err != nil {
		t.Errorf("team-worker-0 was not created: %v", err)
	}
}
