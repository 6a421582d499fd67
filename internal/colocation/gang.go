package colocation

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// GangScheduler is a gang scheduler a cluster offers: it starts all pods of
// a group together, or none.
type GangScheduler string

// The gang schedulers backfill drives, each through its PodGroup.
const (
	// GangNone: the cluster offers no gang scheduling.
	GangNone GangScheduler = ""
	// GangKubernetes is kube-scheduler's own (scheduling.k8s.io/v1beta1
	// PodGroup, GenericWorkload feature gate, Kubernetes 1.37).
	GangKubernetes GangScheduler = "kubernetes"
	// GangVolcano is Volcano (scheduling.volcano.sh/v1beta1 PodGroup).
	GangVolcano GangScheduler = "volcano"
	// GangSchedulerPlugins is the scheduler-plugins coscheduling plugin
	// (scheduling.x-k8s.io/v1alpha1 PodGroup).
	GangSchedulerPlugins GangScheduler = "scheduler-plugins"
)

// PodGroupGVK is the PodGroup kind of a gang scheduler.
func (g GangScheduler) PodGroupGVK() schema.GroupVersionKind {
	switch g {
	case GangVolcano:
		return schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"}
	case GangSchedulerPlugins:
		return schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}
	}
	return schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1beta1", Kind: "PodGroup"}
}

// DiscoverGangScheduler returns the first gang scheduler whose PodGroup the
// apiserver serves: Kubernetes' own, then Volcano's, then
// scheduler-plugins'.
func DiscoverGangScheduler(dc discovery.DiscoveryInterface) (GangScheduler, error) {
	for _, g := range []GangScheduler{GangKubernetes, GangVolcano, GangSchedulerPlugins} {
		gvk := g.PodGroupGVK()
		resources, err := dc.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return GangNone, fmt.Errorf("discovering %s: %w", gvk.GroupVersion(), err)
		}
		for _, r := range resources.APIResources {
			if r.Name == "podgroups" {
				return g, nil
			}
		}
	}
	return GangNone, nil
}
