package cgroupsim

import "math"

// The model's constants: made up, but such that on a CPU node of the demo
// (16 cores, 8 web pods) at the afternoon peak (the node four fifths busy)
// the online pods together wait about 0.04 s per second for a CPU alone,
// 0.06 s/s beside training in the idle class held to the node agent's
// floor, 0.09 s/s beside such training using every idle CPU, 0.2 s/s
// beside training held to the floor out of the idle class, and more than a
// second beside training out of the idle class using every idle CPU: below
// and above the 0.1 s/s at which the manager's cpu-wait signal and
// BackfillOnlinePodsWaitForCPU call it harm. How much the idle class
// spares online threads is an assumption: make bench-interference could
// not tell it apart from noise.
const (
	// WaitScale and WaitExponent shape the wait: a pod's threads wait
	// WaitScale × load^WaitExponent / (1 − load) seconds per second for
	// each core the pod uses.
	WaitScale    = 0.0037
	WaitExponent = 8
	// IdleClassLoad is the share of an idle-class pod's use that online
	// threads still meet: the scheduler preempts it at once, but not for
	// free (caches, wake-ups on a shared core).
	IdleClassLoad = 0.25
	// MaxLoad bounds the load, so that a full node's wait is long but
	// finite.
	MaxLoad = 0.99
)

// Wait is how long, in seconds per second, the threads of a pod using use
// cores wait for a CPU on a node whose load (0 to 1) is load: cpu.pressure
// "some", so at most 1.
func Wait(use, load float64) float64 {
	load = math.Min(math.Max(load, 0), MaxLoad)
	return math.Min(math.Max(use, 0)*WaitScale*math.Pow(load, WaitExponent)/(1-load), 1)
}

// podCPU is what a pod's cgroup asks of the node over a step, in cores.
type podCPU struct {
	// demand is what its threads would use unhindered: its kwok usage.
	demand float64
	// reclaimed: an offline pod on reclaimed capacity, which gets only
	// what the others leave.
	reclaimed bool
	// quota is what its cpu.max lets it use; negative: no limit.
	quota float64
	// idle: its cpu.idle is 1.
	idle bool
}

// podStep is what a pod's cgroup did over a step: cores used, seconds per
// second throttled by its quota and waiting for a CPU.
type podStep struct {
	used, throttled, wait float64
}

// step shares a node of capacity cores among the system's daemons, using
// system cores, and pods: pods not on reclaimed capacity first, up to
// their quota (scaled down together if they ask for more than the node
// has), then reclaimed pods, up to their quota, in what is left (scaled
// down together likewise). A pod asking for more than its quota is
// throttled for the difference. Every pod then waits for a CPU by Wait at
// the node's load, where idle-class use counts IdleClassLoad. It returns
// each pod's step, in the order of pods, and the load.
func step(capacity, system float64, pods []podCPU) ([]podStep, float64) {
	out := make([]podStep, len(pods))
	capped := func(p podCPU) float64 {
		if p.quota >= 0 {
			return math.Min(p.demand, p.quota)
		}
		return p.demand
	}
	var first, offline float64
	for i, p := range pods {
		out[i].used = math.Max(capped(p), 0)
		out[i].throttled = math.Max(p.demand-out[i].used, 0)
		if p.reclaimed {
			offline += out[i].used
		} else {
			first += out[i].used
		}
	}
	room := math.Max(capacity-system, 0)
	firstScale := scale(first, room)
	free := math.Max(room-first*firstScale, 0)
	offlineScale := scale(offline, free)
	load := system
	for i, p := range pods {
		if p.reclaimed {
			out[i].used *= offlineScale
			if p.idle {
				load += IdleClassLoad * out[i].used
				continue
			}
		} else {
			out[i].used *= firstScale
		}
		load += out[i].used
	}
	load /= capacity
	for i := range out {
		out[i].wait = Wait(out[i].used, load)
	}
	return out, load
}

// scale is the factor that fits want into have: 1 when it fits.
func scale(want, have float64) float64 {
	if want <= have || want <= 0 {
		return 1
	}
	return have / want
}
