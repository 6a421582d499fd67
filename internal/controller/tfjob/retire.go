package tfjob

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// RetiredLabel marks a replica pod that succeeded, whose success its job's
// status records (succeededIndexes), and that cleanPodPolicy keeps. The
// operator never needs it again, so the manager's cache selects it out:
// the pods that thousands of finished jobs keep cost the manager nothing.
// The label is set by the patch that releases the pod, so it costs no
// write of its own.
const RetiredLabel = "backfill.dev/retired"

// retire marks the succeeded pods the pass releases and keeps. Under
// cleanPodPolicy All they stay in the cache, to be deleted when the job
// finishes.
func (p *plan) retire(job *kubeflowv1.TFJob, pol policy) {
	if cleanPodPolicy(job, pol) == kubeflowv1.CleanPodPolicyAll {
		return
	}
	for _, pod := range p.releasePods {
		if pod.Status.Phase == corev1.PodSucceeded && !p.deleting(pod) {
			if p.retirePods == nil {
				p.retirePods = map[types.UID]bool{}
			}
			p.retirePods[pod.UID] = true
		}
	}
}

// retirePatch releases a pod and retires it in one write.
var retirePatch = []byte(`{"metadata":{"labels":{"` + RetiredLabel + `":"true"},"$deleteFromPrimitiveList/finalizers":["` + trackingFinalizer + `"]}}`)
