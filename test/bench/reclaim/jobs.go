package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// The backlog of training jobs: single replicas and distributed gangs,
// replicas of 1 to 8 CPU with 2 to 6 GiB per CPU (2 to 32 GiB).
const (
	singleShare                                = 0.4 // of jobs with one replica
	gangMin, gangMax                           = 2, 8
	minHours, maxHours                         = 1.0, 12.0 // run time at full speed, log-uniform
	checkpointMinMinutes, checkpointMaxMinutes = 5, 15
	// replicaCPUUse is the share of its request a replica's CPU demand
	// averages; replicaCPUJitter its minute-to-minute spread.
	replicaCPUUse, replicaCPUJitter = 0.93, 0.04
	replicaMemoryMin                = 0.85 // of request; up to 1
	// A growing replica's memory rises by growthMin to growthMax of its
	// request per hour of running, up to growthCap times its request.
	growthMin, growthMax, growthCap = 0.05, 0.25, 1.5
)

// workload is what jobs bring beyond their requests, the same for every
// policy.
type workload struct {
	// pdbBlocking and pdbOne are the shares of jobs whose
	// PodDisruptionBudget allows no pod down (maxUnavailable 0) or one.
	pdbBlocking, pdbOne float64
	// growing is the share of replicas whose memory grows above their
	// request while they run (a cache, a leak, a growing batch):
	// BestEffort pods have no memory limit to stop them.
	growing float64
}

var (
	replicaCPUs      = []float64{1, 2, 4, 8}
	replicaCPUWeight = []float64{0.35, 0.30, 0.20, 0.15}
	gibPerCPU        = []float64{2, 3, 4, 5, 6}
)

// job is a TFJob: its replicas all run or it makes no progress.
type job struct {
	id       int
	name     string
	request  resources         // per replica
	batch    reclaim.Resources // request, in the units of the batch resources
	replicas []*replica
	// work is what it needs, in replica-minutes at full speed; done what
	// it has, checkpointed what a restart resumes from.
	work, done, checkpointed float64
	checkpointEvery          int // minutes
	// started is the minute all its replicas started (-1: pending);
	// savedAt the minute of its last checkpoint since (-1: none).
	started, savedAt int
	// disrupted: it waits to run again after an eviction or a kill (its
	// recovery, in goodput's terms), not for its first start.
	disrupted bool
	// risk is what reclaim.Decide reads of it; Since follows its last
	// checkpoint, else its start.
	risk reclaim.Job
	// maxUnavailable is its PodDisruptionBudget's (negative: none).
	maxUnavailable int
}

// replica is one pod of a job.
type replica struct {
	job       *job
	name, uid string
	node      *node // nil while pending
	// memoryUse is what it uses of memory while it runs (GiB): from
	// memoryStart, rising by memoryGrowth a minute (GiB) up to memoryMax.
	memoryUse, memoryStart, memoryGrowth, memoryMax float64
}

func (j *job) running() bool { return j.started >= 0 }

// progress advances a running job by one minute at speed (the least
// share of CPU demand any of its replicas got: a synchronous job runs at
// its slowest replica's pace) and checkpoints when it is due. It reports
// whether the job finished.
func (j *job) progress(t int, speed float64) (gained float64, finished bool) {
	gained = min(float64(len(j.replicas))*speed, j.work-j.done)
	j.done += gained
	if j.done >= j.work-1e-9 {
		return gained, true
	}
	if t+1-max(j.started, j.savedAt) >= j.checkpointEvery {
		j.checkpointed, j.savedAt = j.done, t+1
		j.risk.Since = clock(t + 1)
	}
	return gained, false
}

// interrupt stops a running job, one of its replicas evicted or killed:
// every replica stops, the work since its checkpoint is lost, and it
// waits to be scheduled again. It returns the work lost.
func (j *job) interrupt() float64 {
	lost := j.done - j.checkpointed
	j.done = j.checkpointed
	for _, r := range j.replicas {
		r.node.remove(r)
		r.node = nil
	}
	j.started, j.savedAt, j.disrupted = -1, -1, true
	return lost
}

// start marks a job whose replicas were all bound at minute t as running
// from the next minute.
func (j *job) start(t int, rng *rand.Rand) {
	j.started, j.savedAt, j.disrupted = t+1, -1, false
	j.risk.Since = clock(t + 1)
	for _, r := range j.replicas {
		r.memoryStart = j.request.memory * (replicaMemoryMin + (1-replicaMemoryMin)*rng.Float64())
		r.memoryUse = r.memoryStart
	}
}

// grow sets a running replica's memory at minute t.
func (r *replica) grow(t int) {
	if r.memoryGrowth > 0 {
		r.memoryUse = min(r.memoryMax, r.memoryStart+r.memoryGrowth*float64(t+1-r.job.started))
	}
}

// cpuDemand is what a replica wants this minute.
func (r *replica) cpuDemand(rng *rand.Rand) float64 {
	use := min(1, max(0.8, replicaCPUUse+replicaCPUJitter*rng.NormFloat64()))
	return r.job.request.cpu * use
}

// backlog hands out the same sequence of jobs to every policy.
type backlog struct {
	rng  *rand.Rand
	next int
	load workload
}

func newBacklog(seed uint64, w workload) *backlog {
	return &backlog{rng: rand.New(rand.NewPCG(seed, 1<<40)), load: w}
}

// job draws the next job.
func (b *backlog) job() *job {
	rng := b.rng
	replicas := 1
	if rng.Float64() >= singleShare {
		replicas = gangMin + rng.IntN(gangMax-gangMin+1)
	}
	cpu := replicaCPUs[weighted(rng, replicaCPUWeight)]
	memory := min(32, max(2, cpu*gibPerCPU[rng.IntN(len(gibPerCPU))]))
	hours := minHours * math.Pow(maxHours/minHours, rng.Float64())
	j := &job{
		id: b.next, name: fmt.Sprintf("train-%05d", b.next),
		request:         resources{cpu: cpu, memory: memory},
		batch:           resources{cpu: cpu, memory: memory}.exact(),
		work:            float64(replicas) * hours * 60,
		checkpointEvery: checkpointMinMinutes + rng.IntN(checkpointMaxMinutes-checkpointMinMinutes+1),
		started:         -1, savedAt: -1,
	}
	j.risk = reclaim.Job{Namespace: "ml", Name: j.name, Replicas: replicas}
	j.maxUnavailable = budgetOf(rng.Float64(), b.load)
	for i := range replicas {
		name := fmt.Sprintf("%s-worker-%d", j.name, i)
		r := &replica{job: j, name: name, uid: name}
		if rng.Float64() < b.load.growing {
			perHour := growthMin + (growthMax-growthMin)*rng.Float64()
			r.memoryGrowth, r.memoryMax = memory*perHour/60, memory*growthCap
		}
		j.replicas = append(j.replicas, r)
	}
	b.next++
	return j
}

// weighted is an index drawn with the given weights (summing to 1).
func weighted(rng *rand.Rand, weights []float64) int {
	x := rng.Float64()
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// start is the simulated clock's origin: a Monday, midnight.
var start = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// clock is minute t on the simulated clock.
func clock(t int) time.Time { return start.Add(time.Duration(t) * time.Minute) }
