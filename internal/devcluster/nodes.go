package devcluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// What each node's own daemons (kubelet, container runtime, OS) use, as
// on an idle real node: no node reads as unused, which metrics-server
// would leave out of `kubectl top nodes`.
var (
	systemCPU    = resource.MustParse("50m")
	systemMemory = resource.MustParse("256Mi")
)

// nodeSpecs are the simulated nodes: cpu-0.. and gpu-0.., all of one size.
func (c *Cluster) nodeSpecs() []kwok.NodeSpec {
	node := kwok.NodeSpec{
		CPU: resource.MustParse(c.opts.NodeCPU), Memory: resource.MustParse(c.opts.NodeMemory),
		SystemCPU: systemCPU, SystemMemory: systemMemory,
	}
	var specs []kwok.NodeSpec
	for i := range c.opts.CPUNodes {
		node.Name = fmt.Sprintf("cpu-%d", i)
		specs = append(specs, node)
	}
	for i := range c.opts.GPUNodes {
		node.Name, node.GPUs = fmt.Sprintf("gpu-%d", i), c.opts.GPUsPerNode
		// The simulated GPUs' model, as NVIDIA's GPU feature discovery
		// labels a node: the GPU loans' pool.
		node.Labels = map[string]string{colocation.GPUModelLabel: gpuModel}
		specs = append(specs, node)
	}
	return specs
}

// nodeNames are the names of nodeSpecs.
func (c *Cluster) nodeNames() []string {
	var names []string
	for _, s := range c.nodeSpecs() {
		names = append(names, s.Name)
	}
	return names
}
