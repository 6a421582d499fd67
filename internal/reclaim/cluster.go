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
func nodesOf(nodes []*clusterview.Node, pods []*clusterview.Pod, checkpoints map[string]time.Time) clusterState {
	byNode := PodsByNode(pods, checkpoints)
	onRequests := map[string]Resources{}
	for _, p := range pods {
		if p.Tier == colocation.TierOffline && p.Node != "" && p.Batch.IsZero() {
			onRequests[p.Node] = onRequests[p.Node].Add(p.Requests.CPUAndMemory())
		}
	}
	s := clusterState{explained: map[string]Explanation{}}
	for _, n := range nodes {
		node := Node{Name: n.Name, Capacity: n.Capacity.CPUAndMemory(), Allocatable: n.Allocatable.CPUAndMemory(),
			Published: n.Batch, Pods: byNode[n.Name], OnRequests: onRequests[n.Name]}
		if e, ok, err := ReadExplanation(n.Annotations); ok && err == nil {
			node.CooldownUntil, node.PublishedAt, node.Online = e.CooldownUntil, e.At, e.Online
			s.explained[n.Name] = e
		}
		s.nodes = append(s.nodes, node)
	}
	return s
}

// PodsByNode groups the offline pods that hold reclaimed capacity by node,
// as ChooseVictims ranks them; the manager and the node agent both build
// them here. A distributed job is one unit: its pods share a Job, whose
// work at risk began at its last checkpoint (checkpoints, by
// namespace/name), else at the latest start of its pods, so pods must
// hold every pod of a job. A pod given a notice to stop for online pods
// counts as released, as a terminating one does.
func PodsByNode(pods []*clusterview.Pod, checkpoints map[string]time.Time) map[string][]Pod {
	jobs := map[string]*Job{}
	byNode := map[string][]Pod{}
	for _, p := range pods {
		if p.Tier != colocation.TierOffline || p.Node == "" || p.Batch.IsZero() {
			continue
		}
		pod := Pod{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Batch: p.Batch,
			Terminating: p.DeletionTimestamp != nil || p.StopReason == ReasonReclaimedForOnline, Priority: p.Priority, Started: p.Started}
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
			if ckpt, ok := checkpoints[key]; ok {
				j.checkpoint = ckpt
			}
			pod.Job = j
		}
		byNode[p.Node] = append(byNode[p.Node], pod)
	}
	for _, j := range jobs {
		// Work at risk since the last checkpoint, unless the pods started
		// after it: silence is not rewarded, a checkpoint is.
		if !j.checkpoint.IsZero() && j.checkpoint.After(j.Since) {
			j.Since = j.checkpoint
		}
	}
	return byNode
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
