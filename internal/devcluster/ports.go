package devcluster

import (
	"errors"
	"sync"

	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// portsHandedOut are the ports a cluster gave its components.
type portsHandedOut struct {
	mu    sync.Mutex
	given map[int]bool
}

// freePorts are n ports free now that the cluster has not handed out
// before. A component binds its port only when it starts, and two asks of
// the kernel, before either binds, may name the same port: the manager's
// report endpoint and Prometheus once got one port between them.
func (c *Cluster) freePorts(n int) ([]int, error) {
	c.ports.mu.Lock()
	defer c.ports.mu.Unlock()
	if c.ports.given == nil {
		c.ports.given = map[int]bool{}
	}
	var ports []int
	for range 100 {
		free, err := process.FreePorts(n - len(ports))
		if err != nil {
			return nil, err
		}
		for _, p := range free {
			if !c.ports.given[p] {
				c.ports.given[p] = true
				ports = append(ports, p)
			}
		}
		if len(ports) == n {
			return ports, nil
		}
	}
	return nil, errors.New("finding free ports: the kernel keeps naming ports already handed out")
}
