package framework

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetPodStatus writes a pod's status subresource as mutate changes it, as
// a kubelet would where no kubelet runs, retrying on conflict.
func (a *APIServer) SetPodStatus(t *testing.T, pod *corev1.Pod, mutate func(*corev1.PodStatus)) {
	t.Helper()
	Eventually(t, "pod "+pod.Name+" status to be written", func(ctx context.Context) (bool, error) {
		if err := a.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		mutate(&pod.Status)
		err := a.Client.Status().Update(ctx, pod)
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}
