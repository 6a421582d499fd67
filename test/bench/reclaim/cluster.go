package main

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// node is one node as a policy's run sees it: the offline replicas bound
// to it and the policy's state for it.
type node struct {
	index    int
	name     string
	replicas []*replica
	// held is what its replicas request.
	held reclaim.Resources
	// published is the batch capacity the node offers (reclaiming
	// policies), publishedAt when backfill last changed it,
	// cooldownUntil the end of backfill's cool-down, and writtenAt the
	// minute Koordinator last wrote it.
	published     reclaim.Resources
	publishedAt   time.Time
	cooldownUntil time.Time
	writtenAt     int
}

func (n *node) bind(r *replica) {
	r.node = n
	n.replicas = append(n.replicas, r)
	n.held = n.held.Add(r.job.batch)
}

func (n *node) remove(r *replica) {
	n.replicas = slices.DeleteFunc(n.replicas, func(o *replica) bool { return o == r })
	n.held = n.held.Sub(r.job.batch)
}

// offlineMemory is what its replicas use of memory (GiB).
func (n *node) offlineMemory() float64 {
	sum := 0.0
	for _, r := range n.replicas {
		sum += r.memoryUse
	}
	return sum
}

// cluster is the nodes and the jobs of one policy's run.
type cluster struct {
	spec    nodeSpec
	nodes   []*node
	running []*job
	// pending are the jobs waiting for all their replicas to be bound,
	// oldest first: a job interrupted goes back to its place by age.
	pending []*job
}

func newCluster(spec nodeSpec, nodes int) *cluster {
	c := &cluster{spec: spec}
	for i := range nodes {
		c.nodes = append(c.nodes, &node{index: i, name: nodeName(i)})
	}
	return c
}

func nodeName(i int) string { return fmt.Sprintf("node-%03d", i) }

// requeue puts an interrupted job back among the pending ones, in its
// place by age, as the operator recreates its pods.
func (c *cluster) requeue(j *job) {
	c.running = slices.DeleteFunc(c.running, func(o *job) bool { return o == j })
	i, _ := slices.BinarySearchFunc(c.pending, j.id, func(p *job, id int) int { return cmp.Compare(p.id, id) })
	c.pending = slices.Insert(c.pending, i, j)
}
