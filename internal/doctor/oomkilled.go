package doctor

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// lessMemory is the other way out of an OOM kill.
const lessMemory = "or lower what training holds in memory: batch size, shuffle buffer, prefetch"

// oomKilledAt says which memory bound the kernel killed a container at,
// and how to raise it. A pod on reclaimed capacity keeps its template's
// memory limit (limits.memory), which the kernel enforces; its
// backfill.dev/batch-memory, the template's memory request, only decides
// where the scheduler places it. Without a memory limit, the container
// was killed because its node ran out of memory.
func oomKilledAt(p *corev1.Pod, container string) (finding, fix string) {
	var r corev1.ResourceRequirements
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == container {
				r = cs[i].Resources
			}
		}
	}
	_, reclaimed := p.Annotations[colocation.OriginalResourcesAnnotation]
	where := fmt.Sprintf("container %s in the job's template", container)
	limit, limited := r.Limits[corev1.ResourceMemory]
	batch, hasBatch := r.Requests[colocation.ResourceBatchMemory]
	switch {
	case limited && !limit.IsZero() && reclaimed:
		finding = fmt.Sprintf("it was OOMKilled at its memory limit of %s (limits.memory: the template's limit, which the pod on reclaimed capacity keeps)", show(limit))
		fix = fmt.Sprintf("raise resources.limits.memory of %s (now %s)", where, show(limit))
		if hasBatch {
			fix += fmt.Sprintf(", and its requests.memory, which the pod asks of reclaimed memory as %s (now %s),", colocation.ResourceBatchMemory, colocation.MemoryString(batch.Value()))
		}
		return finding, fix + " " + lessMemory
	case limited && !limit.IsZero():
		return fmt.Sprintf("it was OOMKilled at its memory limit of %s (limits.memory)", show(limit)),
			fmt.Sprintf("raise resources.limits.memory of %s (now %s), and its requests.memory, %s", where, show(limit), lessMemory)
	case reclaimed && hasBatch:
		return fmt.Sprintf("it was OOMKilled with no memory limit: its node ran out of memory; on reclaimed capacity it asked %s of %s (the template's memory request), which places the pod but limits nothing",
				colocation.MemoryString(batch.Value()), colocation.ResourceBatchMemory),
			fmt.Sprintf("raise requests.memory of %s to what training uses, so that the pod is placed where that much memory is reclaimed, and set resources.limits.memory so that it is stopped at its own limit, not its node's; %s", where, lessMemory)
	}
	return "it was OOMKilled with no memory limit: its node ran out of memory",
		fmt.Sprintf("set resources.requests.memory of %s to what training uses, and resources.limits.memory; %s", where, lessMemory)
}
