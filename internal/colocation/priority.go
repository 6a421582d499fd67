package colocation

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Offline priority defaults. A pod without a PriorityClass has priority 0,
// so offline work must rank below 0 to yield to default online pods; a
// class of value 100, as often suggested for training, outranks them and
// lets training preempt online services.
const (
	DefaultOfflinePriorityClass       = "backfill-offline"
	DefaultOfflinePriority      int32 = -100
)

// EnsureOfflinePriorityClass creates the offline PriorityClass unless a
// class of that name exists. It never preempts (preemptionPolicy Never):
// offline work waits for idle capacity instead of taking it. An existing
// class is left as its owner made it.
func EnsureOfflinePriorityClass(ctx context.Context, c client.Client, name string, value int32) error {
	never := corev1.PreemptNever
	pc := &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "backfill"},
		},
		Value:            value,
		PreemptionPolicy: &never,
		Description:      "Offline training (backfill): below every online pod, never preempts, yields to online work.",
	}
	if err := c.Create(ctx, pc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating PriorityClass %s: %w", name, err)
	}
	return nil
}
