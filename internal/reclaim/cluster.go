package reclaim

import (
	"time"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// clusterState is the view's nodes and pods as the decisions see them.
type clusterState struct {
	nodes []Node
	// explained are the nodes' current explanations, by node name.
	explained map[string]Explanation
}

// nodesOf groups the view's offline pods by node into what Decide reads.
// A distributed job is one unit: its pods share a Job, whose work at risk
// began at the latest start of its pods.
func nodesOf(nodes []*clusterview.Node, pods []*clusterview.Pod) clusterState {
	jobs := map[string]*Job{}
	byNode := map[string][]Pod{}
	onRequests := map[string]Resources{}
	for _, p := range pods {
		if p.Tier != colocation.TierOffline || p.Node == "" {
			continue
		}
		if p.Batch.IsZero() {
			onRequests[p.Node] = onRequests[p.Node].Add(p.Requests.Exact())
			continue
		}
		pod := Pod{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Batch: p.Batch,
			Terminating: p.DeletionTimestamp != nil, Priority: p.Priority, Started: p.Started}
		if p.TFJob != "" {
			key := p.Namespace + "/" + p.TFJob
			j := jobs[key]
			if j == nil {
				j = &Job{Namespace: p.Namespace, Name: p.TFJob}
				jobs[key] = j
			}
			j.Replicas++
			j.Disrupted = j.Disrupted || pod.Terminating
			j.Since = latest(j.Since, p.Started)
			pod.Job = j
		}
		byNode[p.Node] = append(byNode[p.Node], pod)
	}
	s := clusterState{explained: map[string]Explanation{}}
	for _, n := range nodes {
		node := Node{Name: n.Name, Capacity: n.Capacity.Exact(), Allocatable: n.Allocatable.Exact(),
			Published: n.Batch, Pods: byNode[n.Name], OnRequests: onRequests[n.Name]}
		if e, ok, err := ReadExplanation(n.Annotations); ok && err == nil {
			node.CooldownUntil, node.PublishedAt = e.CooldownUntil, e.At
			s.explained[n.Name] = e
		}
		s.nodes = append(s.nodes, node)
	}
	return s
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
