package reclaim

import "time"

// Node is what a decision knows of one node.
type Node struct {
	Name string
	// Capacity and Allocatable are the node's cpu and memory; the
	// difference is what the kubelet reserves for the system.
	Capacity, Allocatable Resources
	// Published is the batch capacity the node offers now, and
	// PublishedAt when it last changed (zero: never).
	Published   Resources
	PublishedAt time.Time
	// CooldownUntil is the end of the cool-down of its last eviction.
	CooldownUntil time.Time
	// Online is the hold of its online pods' signal, nil when none.
	Online *OnlineHold
	// Pods are the offline pods bound to the node that hold reclaimed
	// capacity, terminating ones included.
	Pods []Pod
	// OnRequests are the cpu and memory requests of offline pods that run
	// on requested capacity (opted out, or started before reclaim was on):
	// not reclaimable, and not online use either.
	OnRequests Resources
}

// Pod is an offline pod on reclaimed capacity.
type Pod struct {
	Namespace, Name, UID string
	// Batch is what it holds of the node's batch capacity.
	Batch Resources
	// Terminating pods are being deleted: what they hold is released.
	Terminating bool
	Priority    int32
	// Started is when it started running (zero while it has not).
	Started time.Time
	// Job is the TFJob it belongs to; nil for an offline pod of no TFJob.
	Job *Job
}

// Job is a TFJob, the unit of work an eviction costs: evicting one replica
// of a distributed job stops all of it back to its last checkpoint.
type Job struct {
	Namespace, Name string
	// Replicas is the count of the job's pods.
	Replicas int
	// Since is when the work at risk began: the job's last checkpoint, or
	// the latest start of its pods when it reports none.
	Since time.Time
	// Disrupted: a pod of the job is already being stopped, so its work
	// since Since is lost whatever else is evicted.
	Disrupted bool
	// checkpoint is the job's last reported checkpoint (zero: none).
	checkpoint time.Time
}

// Usage is what a usage source measured of one node.
type Usage struct {
	// OnlinePeak is the peak over the window of what online pods (every
	// pod that is not offline) used together.
	OnlinePeak Resources
	// OnlineLasting is the least they used together over the last
	// CPUEvictionDelay: a rise that has lasted that long.
	OnlineLasting Resources
	// System is what the node used beyond its pods, when measured.
	System      Resources
	SystemKnown bool
	// At is the time of the newest sample.
	At time.Time
	// Partial: the samples cover less than the window (the source began
	// recently), so the peak may miss one; capacity does not grow on it.
	Partial bool
	// Online is what the node's online pods say of their service; nil
	// when nothing measures it.
	Online *OnlineSignal
}

// held is what the node's pods that are not terminating hold.
func held(pods []Pod) Resources {
	var r Resources
	for _, p := range pods {
		if !p.Terminating {
			r = r.Add(p.Batch)
		}
	}
	return r
}
