package nodeagent

// usage is what one tick measured of the node, in milli-cores used over
// the tick.
type usage struct {
	capacity int64
	// node is what all of the node's CPUs did; kubepods what the pods did;
	// offline what the offline pods did.
	node, kubepods, offline int64
}

// online is what online pods used: every pod that is not offline.
func (u usage) online() int64 { return max(u.kubepods-u.offline, 0) }

// system is what the node used beyond its pods: the kubelet, the
// container runtime, daemons outside Kubernetes.
func (u usage) system() int64 { return max(u.node-u.kubepods, 0) }

// budget is what offline pods may use: the threshold of the node's CPUs
// less what online pods and the system used in the last tick, never less
// than the floor. It reads the last tick only, so that a burst of online
// work takes CPU back within one tick.
func budget(u usage, s Settings) int64 {
	b := u.capacity*int64(s.CPUThreshold)/100 - u.online() - u.system()
	return max(b, u.capacity*int64(s.CPUFloor)/100)
}

// follow moves the offline ceiling toward the budget: down at once, up by
// at most growth percent of the node's CPUs per tick, so that a lull of
// one tick between online requests does not let training take the whole
// node back. A ceiling below zero is none yet: the budget applies at once.
// A change under 1% of the node is not made: every write of a CFS quota
// refills the current period, so rewriting it each tick gives offline
// pods more than their ceiling.
func follow(ceiling, budget, capacity int64, growth int) int64 {
	switch {
	case ceiling < 0:
		return budget
	case max(budget-ceiling, ceiling-budget) < capacity/100:
		return ceiling
	case budget < ceiling:
		return budget
	}
	return min(budget, ceiling+capacity*int64(growth)/100)
}
