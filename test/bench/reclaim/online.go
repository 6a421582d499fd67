package main

import (
	"math"
	"math/rand/v2"
)

// The online services' demand on one node, as a share of what they
// request: low at night (03:00), at its peak in the afternoon (15:00).
// With requests at about 70% of capacity, use is about 20% of capacity at
// night and 30% in the afternoon.
const (
	requestShareMin, requestShareMax = 0.65, 0.75 // online requests / capacity
	cpuNight, cpuPeak                = 0.28, 0.43 // CPU use / requests
	memoryNight, memoryPeak          = 0.30, 0.42 // memory use / requests
	// cpuNoise is the standard deviation of the minute-to-minute noise of
	// CPU use, as a share of requests.
	cpuNoise = 0.03
	// memoryNoise is the same for memory, which moves less.
	memoryNoise = 0.003
	// burstMemoryShare is a burst's memory over its CPU (the profile
	// draws the bursts).
	burstMemoryShare                     = 0.5
	memoryRiseMinutes, memoryFallMinutes = 5.0, 30.0 // memory rises toward its target within minutes, falls back over half an hour
	// lagMinutes: memory peaks an hour after CPU (caches and heaps fill up
	// with the day's traffic).
	lagMinutes = 60
)

// traces are every node's online demand, minute by minute, for the whole
// run: the same for every policy.
type traces struct {
	minutes int
	// requests are the online pods' requests on each node.
	requests []resources
	// cpu (cores) and memory (GiB) by node, then minute.
	cpu, memory [][]float64
}

// newTraces draws the online demand of nodes over minutes from seed, the
// bursts from the profile.
func newTraces(spec nodeSpec, nodes, minutes int, seed uint64, p profile) *traces {
	tr := &traces{minutes: minutes}
	for i := range nodes {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		share := requestShareMin + rng.Float64()*(requestShareMax-requestShareMin)
		req := resources{cpu: spec.capacity.cpu * share, memory: spec.capacity.memory * share}
		cpu, memory := nodeTrace(rng, req, minutes, p)
		tr.requests = append(tr.requests, req)
		tr.cpu = append(tr.cpu, cpu)
		tr.memory = append(tr.memory, memory)
	}
	return tr
}

// nodeTrace is one node's online CPU and memory demand: the diurnal curve
// scaled to its requests, each node with its own amplitude and phase,
// plus Gaussian noise and the profile's bursts.
func nodeTrace(rng *rand.Rand, req resources, minutes int, p profile) (cpu, memory []float64) {
	jitter := func() float64 { return 0.9 + 0.2*rng.Float64() }
	phase := (rng.Float64()*2 - 1) * 60 // minutes, ±1 h
	cpuLow, cpuHigh := cpuNight*jitter(), cpuPeak*jitter()
	memLow, memHigh := memoryNight*jitter(), memoryPeak*jitter()

	cpu, memory = make([]float64, minutes), make([]float64, minutes)
	var b burst
	chance := p.startChance()
	mem := req.memory * (memLow + (memHigh-memLow)*diurnal(-phase-lagMinutes))
	for t := range minutes {
		extra := b.next(rng, p, chance)
		level := cpuLow + (cpuHigh-cpuLow)*diurnal(float64(t)-phase)
		cpu[t] = max(0, req.cpu*(level+extra+cpuNoise*rng.NormFloat64()))

		target := req.memory * (memLow + (memHigh-memLow)*diurnal(float64(t)-phase-lagMinutes) + burstMemoryShare*extra)
		mem += (target - mem) / memoryPace(target, mem)
		memory[t] = max(0, mem+req.memory*memoryNoise*rng.NormFloat64())
	}
	return cpu, memory
}

// diurnal is the shape of a day at minute t: 0 at 03:00, 1 at 15:00.
func diurnal(t float64) float64 {
	hour := math.Mod(t/60, 24)
	return 0.5 * (1 - math.Cos(2*math.Pi*(hour-3)/24))
}

// memoryPace is the time constant, in minutes, of memory moving toward its
// target: memory is taken quickly and given back slowly.
func memoryPace(target, current float64) float64 {
	if target > current {
		return memoryRiseMinutes
	}
	return memoryFallMinutes
}

// peak is node i's highest online demand over the window minutes up to
// and including minute t: what a usage source reports as the online peak.
func (tr *traces) peak(i, t, window int) resources {
	var p resources
	for m := max(0, t-window+1); m <= t; m++ {
		p.cpu, p.memory = max(p.cpu, tr.cpu[i][m]), max(p.memory, tr.memory[i][m])
	}
	return p
}

// least is node i's least online demand over the span minutes up to and
// including minute t (at least that minute).
func (tr *traces) least(i, t, span int) resources {
	l := tr.at(i, t)
	for m := max(0, t-span+1); m < t; m++ {
		l.cpu, l.memory = min(l.cpu, tr.cpu[i][m]), min(l.memory, tr.memory[i][m])
	}
	return l
}

// average is node i's mean online demand over the window minutes up to and
// including minute t.
func (tr *traces) average(i, t, window int) resources {
	var sum resources
	from := max(0, t-window+1)
	for m := from; m <= t; m++ {
		sum.cpu += tr.cpu[i][m]
		sum.memory += tr.memory[i][m]
	}
	n := float64(t - from + 1)
	return resources{cpu: sum.cpu / n, memory: sum.memory / n}
}

// at is node i's online demand in minute t.
func (tr *traces) at(i, t int) resources {
	return resources{cpu: tr.cpu[i][t], memory: tr.memory[i][t]}
}
