//go:build integration

package kwok

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/test/framework"
)

// trackingFinalizer is the operator's: it keeps a replica pod until the
// operator has recorded how the pod ended.
const trackingFinalizer = "backfill.dev/replica-tracking"

// kwok removes a deleted pod only once no finalizer holds it: another
// controller's finalizer is never stripped.
func TestDeletionWaitsForOtherFinalizers(t *testing.T) {
	ctx := context.Background()
	held := makePod("held").OnNode(cpuNode).Finalizer(trackingFinalizer).Create(t)
	free := makePod("free").OnNode(cpuNode).Create(t)
	waitForPod(t, held, "Running", podPhaseIs(corev1.PodRunning))
	waitForPod(t, free, "Running", podPhaseIs(corev1.PodRunning))

	for _, p := range []*corev1.Pod{held, free} {
		if err := apiServer.Client.Delete(ctx, p); err != nil {
			t.Fatalf("Deleting %s: %v", p.Name, err)
		}
	}
	// The pod deleted alongside, without a finalizer, goes: kwok has
	// handled the deletions.
	waitGone(t, free)

	// The held pod stays, for as long as we care to look: the poll ends
	// early only if the pod is gone.
	var gone bool
	_ = wait.PollUntilContextTimeout(ctx, pollInterval, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(held), held)
		gone = apierrors.IsNotFound(err)
		return gone, nil
	})
	if gone {
		t.Fatalf("the pod holding %s went away before the finalizer was removed", trackingFinalizer)
	}
	if held.DeletionTimestamp == nil || len(held.Finalizers) != 1 || held.Finalizers[0] != trackingFinalizer {
		t.Fatalf("pod being deleted: deletionTimestamp %v, finalizers %v; want set and [%s]", held.DeletionTimestamp, held.Finalizers, trackingFinalizer)
	}

	// The owner releases it, and kwok finishes the deletion.
	patch := client.MergeFrom(held.DeepCopy())
	held.Finalizers = nil
	if err := apiServer.Client.Patch(ctx, held, patch); err != nil {
		t.Fatalf("Removing the finalizer: %v", err)
	}
	waitGone(t, held)
}

func waitGone(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), pollInterval, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		lastErr = apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod.DeepCopy())
		return apierrors.IsNotFound(lastErr), nil
	})
	if err != nil {
		t.Fatalf("pod %s was not removed (last get: %v)", pod.Name, lastErr)
	}
}
