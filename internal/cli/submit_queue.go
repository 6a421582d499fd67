package cli

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/queueing"
)

// checkQueueName refuses a --queue that no LocalQueue could be called.
func checkQueueName(name string) error {
	if name == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return usageError{fmt.Errorf("--queue %q is not a LocalQueue name: %s", name, strings.Join(errs, "; "))}
	}
	return nil
}

// queueManifests labels every job for the LocalQueue name, refusing a job
// its file already sends to another queue.
func queueManifests(manifests []manifest, name string) error {
	for _, m := range manifests {
		labels := m.object.GetLabels()
		if current := labels[queueing.QueueNameLabel]; current != "" && current != name {
			return usageError{fmt.Errorf("%s: TFJob %s is labelled %s=%s but --queue says %s: drop --queue or the label", m.where, m.object.GetName(), queueing.QueueNameLabel, current, name)}
		}
		if labels == nil {
			labels = map[string]string{}
		}
		labels[queueing.QueueNameLabel] = name
		m.object.SetLabels(labels)
	}
	return nil
}

// checkLocalQueues makes sure each labelled job's LocalQueue exists: Kueue
// keeps a job for a missing one suspended for good. Without Kueue, or
// without leave to read LocalQueues, it says nothing.
func checkLocalQueues(ctx context.Context, c client.Reader, manifests []manifest) error {
	for _, m := range manifests {
		name := m.object.GetLabels()[queueing.QueueNameLabel]
		if name == "" {
			continue
		}
		lq := &unstructured.Unstructured{}
		lq.SetGroupVersionKind(queueing.LocalQueueGVK)
		err := c.Get(ctx, client.ObjectKey{Namespace: m.object.GetNamespace(), Name: name}, lq)
		switch {
		case err == nil, meta.IsNoMatchError(err), apierrors.IsForbidden(err):
		case apierrors.IsNotFound(err):
			return usageError{fmt.Errorf("%s: TFJob %s is for LocalQueue %s, which does not exist in namespace %s; Kueue would keep it suspended: list the queues with kubectl get localqueues -n %s",
				m.where, m.object.GetName(), name, m.object.GetNamespace(), m.object.GetNamespace())}
		default:
			return fmt.Errorf("reading LocalQueue %s/%s: %w", m.object.GetNamespace(), name, err)
		}
	}
	return nil
}
