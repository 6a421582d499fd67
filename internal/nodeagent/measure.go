package nodeagent

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// reading is one sample of the node's cumulative CPU counters.
type reading struct {
	at             time.Time
	node, kubepods time.Duration
	// offline and throttled are each reclaimed pod's CPU time and time
	// throttled.
	offline, throttled map[types.UID]time.Duration
}

// read samples the node, its pods and its reclaimed pods.
func (a *Agent) read(pods []Pod) (*reading, error) {
	fs := a.cfg.FS
	r := &reading{at: time.Now(), offline: map[types.UID]time.Duration{}, throttled: map[types.UID]time.Duration{}}
	var err error
	if r.node, err = fs.NodeCPUBusy(); err != nil {
		return nil, fmt.Errorf("reading the node's CPU time: %w", err)
	}
	if r.kubepods, err = fs.CPUUsage(""); err != nil {
		return nil, fmt.Errorf("reading the pods' CPU time: %w", err)
	}
	for _, p := range pods {
		if !p.Reclaimed || !fs.Exists(p.group(fs)) {
			continue
		}
		// A pod whose cgroup goes while it is read is simply not counted.
		if used, err := fs.CPUUsage(p.group(fs)); err == nil {
			r.offline[p.UID] = used
		}
		if throttled, err := fs.CPUThrottled(p.group(fs)); err == nil {
			r.throttled[p.UID] = throttled
		}
	}
	return r, nil
}

// since is what the node used between prev and r, in milli-cores. A pod
// new since prev counts from r on.
func (r *reading) since(prev *reading, capacity int64) usage {
	elapsed := r.at.Sub(prev.at)
	if elapsed <= 0 {
		return usage{capacity: capacity}
	}
	milli := func(d time.Duration) int64 { return max(int64(d)*1000/int64(elapsed), 0) }
	u := usage{capacity: capacity, node: milli(r.node - prev.node), kubepods: milli(r.kubepods - prev.kubepods)}
	for uid, used := range r.offline {
		if before, ok := prev.offline[uid]; ok {
			u.offline += milli(used - before)
		}
	}
	return u
}

// throttledSince is how long the reclaimed pods were throttled between
// prev and r, together.
func (r *reading) throttledSince(prev *reading) time.Duration {
	var d time.Duration
	for uid, t := range r.throttled {
		if before, ok := prev.throttled[uid]; ok && t > before {
			d += t - before
		}
	}
	return d
}
