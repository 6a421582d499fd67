package report

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	tfjobctl "github.com/backfill-dev/backfill/internal/controller/tfjob"
)

// Objects reads the pods and TFJobs that reports are checked against:
// reads only, so that a report cannot write to the cluster.
type Objects interface {
	Pod(ctx context.Context, key types.NamespacedName) (*corev1.Pod, error)
	TFJob(ctx context.Context, key types.NamespacedName) (*kubeflowv1.TFJob, error)
}

// CachedObjects reads through r, the manager's cached client: its cache
// holds the TFJobs and the pods labelled as the operator's
// (training.kubeflow.org/operator-name=tfjob-controller), so a pod without
// that label is not found, and a report costs the apiserver nothing but
// its TokenReview. The label alone proves nothing: see authorize.
func CachedObjects(r client.Reader) Objects { return cachedObjects{r} }

type cachedObjects struct{ r client.Reader }

func (c cachedObjects) Pod(ctx context.Context, key types.NamespacedName) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	return pod, c.r.Get(ctx, key, pod)
}

func (c cachedObjects) TFJob(ctx context.Context, key types.NamespacedName) (*kubeflowv1.TFJob, error) {
	job := &kubeflowv1.TFJob{}
	return job, c.r.Get(ctx, key, job)
}

// authorize lets the pod of id report for job: the pod exists with the
// token's UID, is not terminating, and is one of the replicas the operator
// creates for the job (tfjob.ReplicaOf, the rule the controller adopts
// pods by), which exists with the UID the pod's owner reference names.
// The pod's controller is checked before the job is read, so that a pod
// learns nothing of jobs but the one it names: a job that does not exist
// is 404 only to pods that claim it.
func authorize(ctx context.Context, objects Objects, id Identity, job types.NamespacedName) (*kubeflowv1.TFJob, *corev1.Pod, *refusal) {
	if id.PodName == "" {
		return nil, nil, refuse(http.StatusForbidden, "the token is bound to no pod: use the token the operator mounts in the pod (/var/run/secrets/backfill.dev/token), not a ServiceAccount's")
	}
	podKey := types.NamespacedName{Namespace: id.Namespace, Name: id.PodName}
	pod, err := objects.Pod(ctx, podKey)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, refuse(http.StatusForbidden, "pod %s, which the token is bound to, is gone or is not a TFJob replica: only a TFJob's running replicas report", podKey)
	case err != nil:
		return nil, nil, refuse(http.StatusServiceUnavailable, "cannot read pod %s now; retry", podKey)
	case pod.UID != id.PodUID:
		return nil, nil, refuse(http.StatusForbidden, "pod %s was recreated since the token was issued: the token of a pod that is gone reports nothing", podKey)
	case pod.DeletionTimestamp != nil:
		return nil, nil, refuse(http.StatusForbidden, "pod %s is terminating: a terminating pod reports nothing", podKey)
	}
	owner := metav1.GetControllerOf(pod)
	if pod.Namespace != job.Namespace || owner == nil || owner.Kind != kubeflowv1.Kind ||
		owner.APIVersion != kubeflowv1.GroupVersion.String() || owner.Name != job.Name {
		return nil, nil, refuse(http.StatusForbidden, "pod %s is not a replica of TFJob %s: a pod reports only its own job's progress", podKey, job)
	}
	tfjob, err := objects.TFJob(ctx, job)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, refuse(http.StatusNotFound, "TFJob %s does not exist", job)
	case err != nil:
		return nil, nil, refuse(http.StatusServiceUnavailable, "cannot read TFJob %s now; retry", job)
	case tfjob.UID != owner.UID:
		return nil, nil, refuse(http.StatusForbidden, "pod %s belongs to an earlier TFJob %s, since deleted and created again", podKey, job)
	case tfjob.DeletionTimestamp != nil:
		// The controller forgets a deleted job's progress: a report now
		// would outlive it in the store.
		return nil, nil, refuse(http.StatusNotFound, "TFJob %s is being deleted", job)
	}
	// Labels and owner references are anyone's to write: a pod made to
	// look like a replica is not one.
	if err := tfjobctl.ReplicaOf(pod, tfjob); err != nil {
		return nil, nil, refuse(http.StatusForbidden, "pod %s is not a replica of TFJob %s: %v; only the pods the operator creates for a job report its progress", podKey, job, err)
	}
	return tfjob, pod, nil
}
