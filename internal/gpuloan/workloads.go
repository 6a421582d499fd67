package gpuloan

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// The kinds of online workloads, as a ScaledObject's scaleTargetRef names
// them.
const (
	kindDeployment  = "Deployment"
	kindStatefulSet = "StatefulSet"
)

// workload is an online Deployment or StatefulSet whose pods request GPUs.
type workload struct {
	kind, namespace, name string
	// gpusPerPod is what one pod requests of nvidia.com/gpu.
	gpusPerPod int
	// replicas is what its spec asks for now.
	replicas    int32
	placement   placement
	annotations map[string]string
}

// key is the workload as a ScaledObject's target names it.
func (w workload) key() string { return w.kind + "/" + w.namespace + "/" + w.name }

// String is namespace/name, for explanations.
func (w workload) String() string { return w.namespace + "/" + w.name }

// onlineWorkloads lists the Deployments and StatefulSets whose pods
// request GPUs and are online (colocation.PodTier).
func onlineWorkloads(ctx context.Context, r client.Reader, offlineClass string) ([]workload, error) {
	var deployments appsv1.DeploymentList
	if err := r.List(ctx, &deployments); err != nil {
		return nil, fmt.Errorf("listing Deployments for online GPU workloads: %w", err)
	}
	var sets appsv1.StatefulSetList
	if err := r.List(ctx, &sets); err != nil {
		return nil, fmt.Errorf("listing StatefulSets for online GPU workloads: %w", err)
	}
	return workloadsOf(deployments.Items, sets.Items, offlineClass), nil
}

// workloadsOf are the online GPU workloads among deployments and sets.
func workloadsOf(deployments []appsv1.Deployment, sets []appsv1.StatefulSet, offlineClass string) []workload {
	var out []workload
	for i := range deployments {
		d := &deployments[i]
		if w, ok := workloadOf(kindDeployment, d.Namespace, d.Name, d.Annotations, d.Spec.Replicas, &d.Spec.Template, offlineClass); ok {
			out = append(out, w)
		}
	}
	for i := range sets {
		s := &sets[i]
		if w, ok := workloadOf(kindStatefulSet, s.Namespace, s.Name, s.Annotations, s.Spec.Replicas, &s.Spec.Template, offlineClass); ok {
			out = append(out, w)
		}
	}
	return out
}

// workloadOf is a Deployment's or StatefulSet's workload, ok when its pods
// are online and request GPUs.
func workloadOf(kind, namespace, name string, annotations map[string]string, replicas *int32, tmpl *corev1.PodTemplateSpec, offlineClass string) (workload, bool) {
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	if colocation.PodTier(pod, offlineClass) != colocation.TierOnline {
		return workload{}, false
	}
	gpus := gpusOf(pod)
	if gpus <= 0 {
		return workload{}, false
	}
	n := int32(1) // both kinds default to one replica
	if replicas != nil {
		n = *replicas
	}
	return workload{kind: kind, namespace: namespace, name: name, gpusPerPod: gpus, replicas: n,
		placement: placementOf(&tmpl.Spec), annotations: annotations}, true
}

// gpusOf is what a pod requests of nvidia.com/gpu, as the scheduler counts.
// A template's container that sets only a limit requests that much: the
// apiserver defaults the request so when it creates the pod.
func gpusOf(pod *corev1.Pod) int {
	defaulted := pod.DeepCopy()
	for _, cs := range [][]corev1.Container{defaulted.Spec.InitContainers, defaulted.Spec.Containers} {
		for i := range cs {
			r := &cs[i].Resources
			if limit, ok := r.Limits[clusterview.ResourceGPU]; ok {
				if _, set := r.Requests[clusterview.ResourceGPU]; !set {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[clusterview.ResourceGPU] = limit
				}
			}
		}
	}
	requests := resourcehelper.PodRequests(defaulted, resourcehelper.PodResourcesOptions{})
	q := requests[clusterview.ResourceGPU]
	return int(q.Value())
}

// placementOf reads the GPU models a pod may run on: its nodeSelector's
// model, else the models its required node affinity allows where every
// term names some (terms are alternatives), else any.
func placementOf(spec *corev1.PodSpec) placement {
	if m, ok := spec.NodeSelector[colocation.GPUModelLabel]; ok {
		return placement{models: map[string]bool{m: true}}
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return placement{}
	}
	models := map[string]bool{}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		named := false
		for _, e := range term.MatchExpressions {
			if e.Key == colocation.GPUModelLabel && e.Operator == corev1.NodeSelectorOpIn {
				named = true
				for _, v := range e.Values {
					models[v] = true
				}
			}
		}
		if !named {
			return placement{}
		}
	}
	return placement{models: models}
}
