package gpuloan

import (
	"sort"

	"github.com/backfill-dev/backfill/internal/clusterview"
)

// PoolUnlabelled names the pool of GPU nodes without a GPU model label.
const PoolUnlabelled = "unlabelled"

// pool is one GPU pool: the nodes whose GPUs are of one model.
type pool struct {
	name string
	// gpus is the pool's allocatable nvidia.com/gpu.
	gpus  int
	nodes map[string]bool
}

// poolName is the pool of a node of GPU model model.
func poolName(model string) string {
	if model == "" {
		return PoolUnlabelled
	}
	return model
}

// poolsOf groups the nodes that have GPUs into pools, by name.
func poolsOf(nodes []*clusterview.Node) map[string]*pool {
	out := map[string]*pool{}
	for _, n := range nodes {
		if n.Allocatable.GPU <= 0 {
			continue
		}
		name := poolName(n.GPUModel)
		p := out[name]
		if p == nil {
			p = &pool{name: name, nodes: map[string]bool{}}
			out[name] = p
		}
		p.gpus += int(n.Allocatable.GPU)
		p.nodes[n.Name] = true
	}
	return out
}

// sortedPools are the pools' names in order.
func sortedPools(pools map[string]*pool) []string {
	names := make([]string, 0, len(pools))
	for name := range pools {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// placement says which pools a pod template may land in: the model its
// nodeSelector or required node affinity names, else any.
type placement struct {
	// models the pod may run on; nil: any.
	models map[string]bool
}

// fits reports whether pool may take the pod.
func (pl placement) fits(name string) bool {
	return pl.models == nil || pl.models[name]
}

// and is the pools both placements allow.
func (pl placement) and(other placement) placement {
	switch {
	case pl.models == nil:
		return other
	case other.models == nil:
		return pl
	}
	both := map[string]bool{}
	for m := range pl.models {
		if other.models[m] {
			both[m] = true
		}
	}
	return placement{models: both}
}
