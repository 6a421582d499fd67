package colocation

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Reclaimed capacity: the CPU and memory that online pods request but do
// not use. The manager publishes it per node as two extended resources,
// and the pods of TFJobs request those instead of cpu and memory, so that
// kube-scheduler places them in reclaimed capacity with no plugin.
const (
	// ResourceBatchCPU is reclaimed CPU, in milli-CPU.
	ResourceBatchCPU corev1.ResourceName = "backfill.dev/batch-cpu"
	// ResourceBatchMemory is reclaimed memory, in bytes.
	ResourceBatchMemory corev1.ResourceName = "backfill.dev/batch-memory"
)

// CapacityAnnotation on a TFJob chooses the capacity its pods run on:
// CapacityReclaimed (the default) or CapacityRequested, the cpu and memory
// requests of its templates as they are.
const (
	CapacityAnnotation = "backfill.dev/capacity"
	CapacityReclaimed  = "reclaimed"
	CapacityRequested  = "requested"
)

// OriginalResourcesAnnotation on a pod moved to reclaimed capacity keeps
// the cpu and memory requests and limits its template asked for, as JSON
// keyed by container name.
const OriginalResourcesAnnotation = "backfill.dev/original-resources"

// ValidateCapacity says what is wrong with a TFJob's CapacityAnnotation.
func ValidateCapacity(annotations map[string]string) error {
	v, ok := annotations[CapacityAnnotation]
	if !ok || v == CapacityReclaimed || v == CapacityRequested {
		return nil
	}
	return fmt.Errorf("annotation %s=%q: must be %q (run in capacity online pods request but do not use) or %q (run on the cpu and memory the templates request)",
		CapacityAnnotation, v, CapacityReclaimed, CapacityRequested)
}

// OnReclaimedCapacity reports whether the pods of a TFJob with these
// annotations run on reclaimed capacity.
func OnReclaimedCapacity(annotations map[string]string) bool {
	return annotations[CapacityAnnotation] != CapacityRequested
}

// ToBatchResources moves the cpu and memory of every container and init
// container of spec to ResourceBatchCPU and ResourceBatchMemory, request
// equal to limit as Kubernetes requires of extended resources. The amount
// is the request, or the limit where only a limit is set (Kubernetes
// defaults the request to it). GPUs and other resources stay. Every
// container keeps explicit cpu and memory requests of 0 and the
// template's limits (reclaimedCPUAndMemory), so that ResourceQuotas and
// LimitRanges (rules) admit the pod and nothing but the batch resources
// is counted twice. It returns the original resources as the value of
// OriginalResourcesAnnotation, or "" when nothing moved. A spec with
// pod-level cpu or memory resources is left alone: extended resources
// have no pod-level form.
func ToBatchResources(spec *corev1.PodSpec, rules ContainerRules) (string, error) {
	if r := spec.Resources; r != nil && (hasCPUOrMemory(r.Requests) || hasCPUOrMemory(r.Limits)) {
		return "", nil
	}
	original := map[string]corev1.ResourceRequirements{}
	all := [][]corev1.Container{spec.InitContainers, spec.Containers}
	for _, containers := range all {
		for _, c := range containers {
			if hasCPUOrMemory(c.Resources.Requests) || hasCPUOrMemory(c.Resources.Limits) {
				original[c.Name] = cpuAndMemory(c.Resources)
			}
		}
	}
	if len(original) == 0 {
		return "", nil
	}
	for _, containers := range all {
		for i := range containers {
			containers[i].Resources = reclaimedResources(containers[i].Resources, rules)
		}
	}
	data, err := json.Marshal(original)
	if err != nil {
		return "", fmt.Errorf("recording the original resources: %w", err)
	}
	return string(data), nil
}

// reclaimedResources is r on reclaimed capacity: its cpu and memory as
// batch resources, beside the cpu and memory reclaimedCPUAndMemory keeps.
func reclaimedResources(r corev1.ResourceRequirements, rules ContainerRules) corev1.ResourceRequirements {
	out := corev1.ResourceRequirements{Requests: withoutCPUOrMemory(r.Requests), Limits: withoutCPUOrMemory(r.Limits), Claims: r.Claims}
	if q, ok := requestOrLimit(r, corev1.ResourceCPU); ok {
		batch := *resource.NewQuantity(q.MilliValue(), resource.DecimalSI)
		out.Requests[ResourceBatchCPU], out.Limits[ResourceBatchCPU] = batch, batch
	}
	if q, ok := requestOrLimit(r, corev1.ResourceMemory); ok {
		batch := *resource.NewQuantity(q.Value(), resource.BinarySI)
		out.Requests[ResourceBatchMemory], out.Limits[ResourceBatchMemory] = batch, batch
	}
	kept := reclaimedCPUAndMemory(r, rules)
	for name, q := range kept.Requests {
		out.Requests[name] = q
	}
	for name, q := range kept.Limits {
		out.Limits[name] = q
	}
	if len(out.Limits) == 0 {
		out.Limits = nil
	}
	return out
}

// withoutCPUOrMemory copies a list but for cpu and memory.
func withoutCPUOrMemory(list corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range list {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			out[name] = q
		}
	}
	return out
}

func requestOrLimit(r corev1.ResourceRequirements, name corev1.ResourceName) (resource.Quantity, bool) {
	if q, ok := r.Requests[name]; ok {
		return q, true
	}
	q, ok := r.Limits[name]
	return q, ok
}

// cpuAndMemory keeps only the cpu and memory of r.
func cpuAndMemory(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := r.Requests[name]; ok {
			if out.Requests == nil {
				out.Requests = corev1.ResourceList{}
			}
			out.Requests[name] = q
		}
		if q, ok := r.Limits[name]; ok {
			if out.Limits == nil {
				out.Limits = corev1.ResourceList{}
			}
			out.Limits[name] = q
		}
	}
	return out
}

func hasCPUOrMemory(list corev1.ResourceList) bool {
	_, cpu := list[corev1.ResourceCPU]
	_, mem := list[corev1.ResourceMemory]
	return cpu || mem
}

// OriginalResources reads OriginalResourcesAnnotation: the cpu and memory
// each container asked for before it moved to reclaimed capacity.
func OriginalResources(annotations map[string]string) (map[string]corev1.ResourceRequirements, error) {
	v, ok := annotations[OriginalResourcesAnnotation]
	if !ok {
		return nil, nil
	}
	var out map[string]corev1.ResourceRequirements
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", OriginalResourcesAnnotation, err)
	}
	return out, nil
}

// AnnotationPrefix begins every annotation backfill writes.
const AnnotationPrefix = "backfill.dev/"

// BatchOf reads the batch resources off a list (a pod's requests, a node's
// capacity).
func BatchOf(list corev1.ResourceList) Resources {
	var r Resources
	if q, ok := list[ResourceBatchCPU]; ok {
		r.MilliCPU = q.Value()
	}
	if q, ok := list[ResourceBatchMemory]; ok {
		r.Memory = q.Value()
	}
	return r
}
