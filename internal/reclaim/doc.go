// Package reclaim is backfill's reclaimed capacity: per node, how much CPU
// and memory offline work may use beyond what online pods request, from
// measured usage, published as the extended resources backfill.dev/batch-cpu
// and backfill.dev/batch-memory; and online protection, which evicts just
// enough offline pods, least work lost first, when online use rises.
//
// The decision for one node is pure (Decide), so that the controller that
// writes nodes and evicts pods, and the simulation of test/bench, run the
// same code:
//
//	target    = capacity - margin - system - online peak - offline on requests
//	margin    = capacity x margin percent
//	system    = max(kubelet reserved, node use not by any pod)
//	online    = peak of the online pods' summed use over the window
//	held      = batch requests of the node's offline pods not terminating
//	deficit   = held - target, when above the tolerance: evict that much
//	published = target at once when it falls, growing slowly when it rises,
//	            never below what the remaining offline pods hold, and frozen
//	            while usage is stale or, after an eviction, the cool-down runs.
//	held back = while the node's online pods miss their latency objective or
//	            wait for CPU beside offline pods: no growth, and a step of
//	            CPU given back by evicting once it lasts (online.go).
package reclaim
