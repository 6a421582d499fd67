package colocation

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Tier says whether a pod is online (serving) or offline (training that
// yields to online work).
type Tier string

// The tiers, as the tier label of backfill's metrics spells them.
const (
	TierOnline  Tier = "online"
	TierOffline Tier = "offline"
)

// Tiers are all tiers, online first.
var Tiers = []Tier{TierOnline, TierOffline}

// TierLabel marks a pod offline when its value is TierOffline, for training
// that no TFJob controls and that runs under another PriorityClass.
const TierLabel = "backfill.dev/tier"

// PodTier is backfill's one definition of online and offline: a pod is
// offline if a TFJob controls it, if its PriorityClass is the offline class
// (the manager's --offline-priority-class), or if it is labelled
// backfill.dev/tier=offline. Every other pod is online.
func PodTier(pod *corev1.Pod, offlinePriorityClass string) Tier {
	switch {
	case isControlledByTFJob(pod):
		return TierOffline
	case offlinePriorityClass != "" && pod.Spec.PriorityClassName == offlinePriorityClass:
		return TierOffline
	case pod.Labels[TierLabel] == string(TierOffline):
		return TierOffline
	}
	return TierOnline
}

// ControllingTFJob is the name of the kubeflow.org TFJob, of any version,
// that controls the pod; ok is false when none does.
func ControllingTFJob(pod *corev1.Pod) (name string, ok bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != kubeflowv1.Kind {
		return "", false
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != kubeflowv1.GroupVersion.Group {
		return "", false
	}
	return ref.Name, true
}

func isControlledByTFJob(pod *corev1.Pod) bool {
	_, ok := ControllingTFJob(pod)
	return ok
}
