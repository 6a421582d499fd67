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
	// terminating are the pods of stopped jobs still on the node: until
	// their stop notice and grace period run out they use CPU and memory,
	// and the scheduler counts what they request.
	terminating []stoppingPod
	// held is what its replicas and terminating pods request; releasing
	// what the terminating ones do.
	held, releasing reclaim.Resources
	// published is the batch capacity the node offers (reclaiming
	// policies), publishedAt when backfill last changed it,
	// cooldownUntil the end of backfill's cool-down, and writtenAt the
	// minute Koordinator last wrote it.
	published     reclaim.Resources
	publishedAt   time.Time
	cooldownUntil time.Time
	writtenAt     int
	// online is backfill's hold of the node by its online pods' signal.
	online *reclaim.OnlineHold
	// inflation is online pods' P99 inflation of the last minutes, by
	// minute modulo its length: what the online signal reads, late.
	inflation [signalMemory]float64
	// governor is the node agent's ceiling on the node.
	governor *nodeGovernor
}

// signalMemory is how many minutes of online latency a node keeps for
// the online signal: its lag and window together at most.
const signalMemory = 32

func (n *node) bind(r *replica) {
	r.node = n
	n.replicas = append(n.replicas, r)
	n.held = n.held.Add(r.job.batch)
}

func (n *node) remove(r *replica) {
	n.replicas = slices.DeleteFunc(n.replicas, func(o *replica) bool { return o == r })
	n.held = n.held.Sub(r.job.batch)
}

// offlineMemory is what its replicas and terminating pods use of memory
// (GiB).
func (n *node) offlineMemory() float64 {
	sum := 0.0
	for _, r := range n.replicas {
		sum += r.memoryUse
	}
	for _, p := range n.terminating {
		sum += p.memory
	}
	return sum
}

// running is what its replicas that are not terminating request.
func (n *node) running() reclaim.Resources { return n.held.Sub(n.releasing) }

// stoppingPod is a stopped replica's pod until it is gone.
type stoppingPod struct {
	name, uid string
	batch     reclaim.Resources
	// cpu and memory are what it uses meanwhile.
	cpu, memory float64
	// gone is the first minute it no longer runs.
	gone int
}

// terminate leaves a replica's pod on its node until minute gone.
func (n *node) terminate(r *replica, gone int) {
	p := stoppingPod{name: r.name, uid: r.uid + "-stopping", batch: r.job.batch,
		cpu: r.job.request.cpu * replicaCPUUse, memory: r.memoryUse, gone: gone}
	n.terminating = append(n.terminating, p)
	n.held = n.held.Add(p.batch)
	n.releasing = n.releasing.Add(p.batch)
}

// release removes the terminating pods gone by minute t.
func (n *node) release(t int) {
	n.terminating = slices.DeleteFunc(n.terminating, func(p stoppingPod) bool {
		if p.gone > t {
			return false
		}
		n.held = n.held.Sub(p.batch)
		n.releasing = n.releasing.Sub(p.batch)
		return true
	})
}

// killTerminating is the kernel killing a terminating pod: what it uses
// is freed at once.
func (n *node) killTerminating(i int) {
	p := n.terminating[i]
	n.held = n.held.Sub(p.batch)
	n.releasing = n.releasing.Sub(p.batch)
	n.terminating = slices.Delete(n.terminating, i, i+1)
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

// replica is the running replica of uid on n; nil when none is.
func (n *node) replica(uid string) *replica {
	for _, r := range n.replicas {
		if r.uid == uid {
			return r
		}
	}
	return nil
}
