package tfjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// containerRules reads the LimitRanges of namespace from the cache: a pod
// on reclaimed capacity sets its cpu and memory itself, so that the
// LimitRanger neither adds a request the scheduler would count beside the
// batch resources nor caps training with a default limit below what the
// template asked.
func (r *Reconciler) containerRules(ctx context.Context, namespace string) (colocation.ContainerRules, error) {
	var ranges corev1.LimitRangeList
	if err := r.client.List(ctx, &ranges, client.InNamespace(namespace)); err != nil {
		return colocation.ContainerRules{}, fmt.Errorf("listing the LimitRanges of namespace %s: %w", namespace, err)
	}
	return colocation.ContainerRulesOf(ranges.Items), nil
}
