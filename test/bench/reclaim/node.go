package main

import (
	"math"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// resources are CPU in cores and memory in GiB: the units of the model.
// reclaim.Resources (milli-CPU, bytes) are what the scheduler and the
// decisions count in.
type resources struct{ cpu, memory float64 }

const gib = 1 << 30

func (r resources) sub(o resources) resources { return resources{r.cpu - o.cpu, r.memory - o.memory} }

// exact is r in the units of the batch resources, rounded up so that a
// decision never sees less online use than there was.
func (r resources) exact() reclaim.Resources {
	return reclaim.Resources{MilliCPU: int64(math.Ceil(r.cpu * 1000)), Memory: int64(math.Ceil(r.memory * gib))}
}

// nodeSpec is every node's size and what its system (kubelet, container
// runtime, daemons) reserves and uses.
type nodeSpec struct {
	capacity, reserved resources
	// system is what the node uses beyond its pods: below the reservation,
	// as on a healthy node, so every policy counts the reservation.
	system resources
}

func defaultNodeSpec() nodeSpec {
	return nodeSpec{
		capacity: resources{cpu: 32, memory: 128},
		reserved: resources{cpu: 0.5, memory: 1},
		system:   resources{cpu: 0.4, memory: 0.9},
	}
}

func (s nodeSpec) allocatable() resources { return s.capacity.sub(s.reserved) }

// minute is what happened on one node in one minute: the demand on it and
// what each side got.
type minute struct {
	online, offline resources // demand
	// onlineCPU and offlineCPU are the CPU each side got.
	onlineCPU, offlineCPU float64
	// capped: a CPU ceiling held offline pods below their demand.
	capped bool
	// protection is how offline pods were kept off online CPU, and
	// inflation online pods' P99 over their P99 alone (harm.go).
	protection protection
	inflation  float64
}

// shareCPU splits a node's CPU between online and offline demand for a
// minute. BestEffort offline pods (reclaimed capacity) get the CPU online
// pods leave, at most offlineCap; offline pods with requests (Burstable)
// keep what they use, which is at most their request, and online pods get
// the rest.
func shareCPU(spec nodeSpec, m minute, offlineCap float64, bestEffort bool) minute {
	free := spec.capacity.cpu - spec.system.cpu
	offline := min(m.offline.cpu, offlineCap)
	m.capped = offline < m.offline.cpu
	if bestEffort {
		m.onlineCPU = min(m.online.cpu, free)
		m.offlineCPU = max(0, min(offline, free-m.onlineCPU))
		return m
	}
	m.offlineCPU = min(offline, free)
	m.onlineCPU = min(m.online.cpu, free-m.offlineCPU)
	return m
}

// served is the share of their CPU demand the offline pods got: the
// speed they train at.
func (m minute) served() float64 {
	if m.offline.cpu <= 0 {
		return 1
	}
	return m.offlineCPU / m.offline.cpu
}

// cpuUnmet: online pods wanted CPU they did not get.
func (m minute) cpuUnmet() bool { return m.onlineCPU < m.online.cpu-1e-9 }

// memoryUnmet: online demand, offline use and the system together need
// more memory than the node has; the kernel cannot take back the offline
// pods' memory in time.
func (m minute) memoryUnmet(spec nodeSpec) bool {
	return m.online.memory+m.offline.memory+spec.system.memory > spec.capacity.memory
}

// busy is the share of the node's CPU in use: online, offline and the
// system.
func (m minute) busy(spec nodeSpec) float64 {
	return (m.onlineCPU + m.offlineCPU + spec.system.cpu) / spec.capacity.cpu
}

// fill is the share of the CPU online pods and the system left idle that
// offline pods took.
func (m minute) fill(spec nodeSpec) float64 {
	idle := spec.capacity.cpu - m.onlineCPU - spec.system.cpu
	if idle <= 0 {
		return 1
	}
	return m.offlineCPU / idle
}

// latency is online pods' P99 inflation in the minute under its
// protection (harm.go).
func (m minute) latency(spec nodeSpec, h *harmModel) float64 {
	starved := 1.0
	if m.cpuUnmet() && m.onlineCPU > 0 {
		starved = m.online.cpu / m.onlineCPU
	}
	return h.inflation(m.protection, m.onlineCPU/spec.capacity.cpu, m.fill(spec), starved)
}

// hotLines are the shares of a node's CPU above which the report counts
// hot node-minutes: online latency suffers from interference (shared
// caches, memory bandwidth, hyperthreads) even when online pods get their
// share.
var hotLines = [...]float64{0.80, 0.85, 0.90}
