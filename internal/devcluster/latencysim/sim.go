package latencysim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"
)

// Simulation steps: requests are drawn a second of load at a time, and a
// gap longer than maxCatchUp (no scrape for a while) is simulated only for
// its last maxCatchUp, so that a scrape never draws hours of requests.
const (
	step       = time.Second
	maxCatchUp = time.Minute
)

// Simulator keeps a histogram per opted-in pod and draws its requests. It
// is deterministic: the same seed, loads and times draw the same requests.
// It is not safe for concurrent use.
type Simulator struct {
	seed uint64
	pods map[string]*podState // by podKey
}

// podState is one pod's histogram and where its simulation stands.
type podState struct {
	load      PodLoad
	hist      *histogram
	rng       *rand.Rand
	simulated time.Time // requests are drawn up to here
	carry     float64   // the fraction of a request owed from past steps
}

// NewSimulator returns a Simulator whose random sources derive from seed.
func NewSimulator(seed uint64) *Simulator {
	return &Simulator{seed: seed, pods: map[string]*podState{}}
}

// Advance draws every pod's requests up to now, whole steps at a time,
// under its load in loads, and returns the pods' histograms in the order
// of loads. A pod new to the simulator (a new UID too: a pod recreated
// under its name) starts at now with empty buckets; a pod no longer in
// loads is forgotten.
func (s *Simulator) Advance(loads []PodLoad, now time.Time) []Histogram {
	seen := make(map[string]bool, len(loads))
	out := make([]Histogram, 0, len(loads))
	for _, l := range loads {
		key := podKey(l)
		seen[key] = true
		st, ok := s.pods[key]
		if !ok {
			st = &podState{hist: newHistogram(Buckets()), rng: rand.New(rand.NewPCG(s.seed, podSeed(key))), simulated: now}
			s.pods[key] = st
		}
		st.load = l
		st.advance(now)
		out = append(out, Histogram{PodLoad: l, Buckets: st.hist.cumulative(), Count: st.hist.count, Sum: st.hist.sum})
	}
	for key := range s.pods {
		if !seen[key] {
			delete(s.pods, key)
		}
	}
	return out
}

func podKey(l PodLoad) string { return l.Namespace + "/" + l.Pod + "/" + string(l.UID) }

// podSeed is a pod's own stream of the seed's random numbers.
func podSeed(key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return h.Sum64()
}

// advance draws the pod's requests for each whole step up to now.
func (st *podState) advance(now time.Time) {
	if gap := now.Sub(st.simulated); gap > maxCatchUp {
		st.simulated = now.Add(-maxCatchUp)
	}
	rate, mean := RequestRate(st.load.Load), MeanLatency(st.load.Load)
	for ; !st.simulated.Add(step).After(now); st.simulated = st.simulated.Add(step) {
		n := rate*step.Seconds() + st.carry
		whole := math.Floor(n)
		st.carry = n - whole
		for range int(whole) {
			st.hist.observe(st.rng.ExpFloat64() * mean)
		}
	}
}

// Histogram is one pod's histogram as Prometheus exposes it.
type Histogram struct {
	PodLoad
	// Buckets are the cumulative counts by upper bound, without +Inf.
	Buckets map[float64]uint64
	Count   uint64
	Sum     float64
}
