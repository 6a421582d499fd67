package main

import (
	"math/rand/v2"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// pendingJobs is how many jobs always wait: more than any policy can
// start, so that utilisation measures what each policy can fill.
const pendingJobs = 50

// schedule is the scheduler at the end of minute t: pending jobs, oldest
// first, each replica on the first node with room for it; a gang's
// replicas all at once or none (gang scheduling). A job that does not fit
// waits, and younger ones may pass it. room is what a node may still take
// under the policy.
func schedule(c *cluster, room func(*node) reclaim.Resources, t int, rng *rand.Rand) {
	rooms := make([]reclaim.Resources, len(c.nodes))
	for i, n := range c.nodes {
		rooms[i] = room(n)
	}
	waiting := c.pending[:0]
	for _, j := range c.pending {
		where := fit(j, rooms)
		if where == nil {
			waiting = append(waiting, j)
			continue
		}
		for k, r := range j.replicas {
			c.nodes[where[k]].bind(r)
		}
		j.start(t, rng)
		c.running = append(c.running, j)
	}
	clear(c.pending[len(waiting):])
	c.pending = waiting
}

// fit is the node of each replica of j, first fit, taken out of rooms; nil
// (rooms untouched) when a replica fits nowhere.
func fit(j *job, rooms []reclaim.Resources) []int {
	where := make([]int, 0, len(j.replicas))
	for range j.replicas {
		i := firstFit(j.batch, rooms)
		if i < 0 {
			for _, w := range where {
				rooms[w] = rooms[w].Add(j.batch)
			}
			return nil
		}
		rooms[i] = rooms[i].Sub(j.batch)
		where = append(where, i)
	}
	return where
}

func firstFit(request reclaim.Resources, rooms []reclaim.Resources) int {
	for i, r := range rooms {
		if r.Covers(request) {
			return i
		}
	}
	return -1
}

// refill tops the pending jobs up from the backlog.
func refill(c *cluster, b *backlog) {
	for len(c.pending) < pendingJobs {
		c.pending = append(c.pending, b.job())
	}
}
