package latencysim

import (
	"math"
	"time"
)

// The model's constants: made up, but such that a pod of the demo's online
// service (2 CPUs requested, nodes it requests whole) has a P99 of about
// 40ms at night and 170ms at the afternoon peak alone on its node, and
// 230-340ms at the peak when offline pods take the node's idle CPU.
const (
	// CPUPerRequest is the CPU time one request takes, in seconds: a pod
	// using 1.5 cores serves 50 requests per second.
	CPUPerRequest = 0.03
	// MinSpareCPU bounds the spare CPU from below, in cores, so that a
	// pod using more than it can get has a long but finite latency (a P99
	// of 2.8 s) instead of an unstable queue.
	MinSpareCPU = 0.05
)

// ln100 turns an exponential distribution's mean into its P99.
var ln100 = math.Log(100)

// Load is what one online pod's latency depends on, CPU in cores: its own
// use, request and limit, and its node's capacity and what all the pods
// running there use and request.
type Load struct {
	Use, Request float64
	// Limit is the pod's CPU limit, 0 when it has none.
	Limit float64
	// NodeCapacity is the node's CPU; NodeUse what every pod running on
	// it uses, this one, other online pods and offline pods alike;
	// NodeRequests their CPU requests, by which the kernel's CPU weights
	// share the idle CPU. Offline pods on reclaimed capacity request none.
	NodeCapacity, NodeUse, NodeRequests float64
}

// SpareCPU is the CPU the pod could use at once and does not: the rest of
// its request, which its CPU weight keeps for it, plus its share by
// request of the node's idle CPU, up to its limit. At least MinSpareCPU.
func SpareCPU(l Load) float64 {
	idle := math.Max(l.NodeCapacity-l.NodeUse, 0)
	share := 0.0
	if l.NodeRequests > 0 {
		share = idle * l.Request / l.NodeRequests
	}
	if l.Limit > 0 {
		share = math.Min(share, math.Max(l.Limit-l.Request, 0))
	}
	return math.Max(l.Request+share-l.Use, MinSpareCPU)
}

// MeanLatency is the pod's mean response time in seconds, an M/M/1
// queue's: CPUPerRequest over the spare CPU. Its response times are
// exponential with this mean.
func MeanLatency(l Load) float64 { return CPUPerRequest / SpareCPU(l) }

// P99 is the 99th percentile of the pod's response times: ln(100) times
// their mean.
func P99(l Load) time.Duration {
	return time.Duration(ln100 * MeanLatency(l) * float64(time.Second))
}

// RequestRate is how many requests per second the pod serves: its CPU use
// over CPUPerRequest.
func RequestRate(l Load) float64 { return math.Max(l.Use, 0) / CPUPerRequest }
