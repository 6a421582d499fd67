package doctor

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// checkGPUNodes compares the nodes that offer nvidia.com/gpu with the GPU
// pods of the active jobs that wait for the scheduler. A node whose GPUs
// show in capacity but not in allocatable, or not at all, usually has no
// working NVIDIA device plugin.
func checkGPUNodes(s *Snapshot, jobs []*kubeflowv1.TFJob) Result {
	var withGPU, noAllocatable int
	var total resource.Quantity
	for i := range s.Nodes {
		n := &s.Nodes[i]
		alloc := n.Status.Allocatable[GPUResource]
		if !alloc.IsZero() {
			withGPU++
			total.Add(alloc)
			continue
		}
		if c := n.Status.Capacity[GPUResource]; !c.IsZero() {
			noAllocatable++
		}
	}
	waiting, example := 0, ""
	for _, j := range jobs {
		for _, p := range s.jobPods(j) {
			if _, pending := unschedulable(p); !pending {
				continue
			}
			if q := podRequests(p)[GPUResource]; !q.IsZero() {
				waiting++
				example = p.Namespace + "/" + p.Name
			}
		}
	}
	counts := fmt.Sprintf("%d of %d nodes have nvidia.com/gpu allocatable (%s in all)", withGPU, len(s.Nodes), show(total))
	if noAllocatable > 0 {
		counts += fmt.Sprintf("; %d node(s) have GPUs in capacity but none allocatable", noAllocatable)
	}
	fix := "run the NVIDIA device plugin (or the GPU Operator) on the GPU nodes; `kubectl describe node NODE` must show nvidia.com/gpu under Allocatable"
	switch {
	case waiting == 0:
		return ok(CheckGPUNodes, counts+"; no GPU pod waits")
	case withGPU == 0:
		return Result{Check: CheckGPUNodes, Status: StatusFail,
			Finding: fmt.Sprintf("%d GPU pod(s) wait (e.g. %s) but no node has nvidia.com/gpu allocatable (%s)", waiting, example, counts), Fix: fix}
	}
	return Result{Check: CheckGPUNodes, Status: StatusWarn,
		Finding: fmt.Sprintf("%d GPU pod(s) wait (e.g. %s); %s", waiting, example, counts),
		Fix:     "see pending-resources for how many GPUs they need against how many are free; if GPU nodes are missing from the count, " + fix}
}
