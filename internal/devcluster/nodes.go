package devcluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// nodeSpecs are the simulated nodes: cpu-0.. and gpu-0.., all of one size.
func (c *Cluster) nodeSpecs() []kwok.NodeSpec {
	cpu, mem := resource.MustParse(c.opts.NodeCPU), resource.MustParse(c.opts.NodeMemory)
	var specs []kwok.NodeSpec
	for i := range c.opts.CPUNodes {
		specs = append(specs, kwok.NodeSpec{Name: fmt.Sprintf("cpu-%d", i), CPU: cpu, Memory: mem})
	}
	for i := range c.opts.GPUNodes {
		specs = append(specs, kwok.NodeSpec{Name: fmt.Sprintf("gpu-%d", i), CPU: cpu, Memory: mem, GPUs: c.opts.GPUsPerNode})
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
