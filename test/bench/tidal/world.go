package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/backfill-dev/backfill/internal/tide"
)

// inference is the online workload of the pool: a KEDA ScaledObject's cron
// triggers in Europe/Berlin, a day/night shape with a lower weekend.
var inference = []tide.CronTrigger{
	{Timezone: "Europe/Berlin", Start: "0 6 * * *", End: "0 23 * * *", DesiredReplicas: 10},
	{Timezone: "Europe/Berlin", Start: "0 8 * * 1-5", End: "0 20 * * 1-5", DesiredReplicas: 22},
	{Timezone: "Europe/Berlin", Start: "0 10 * * 1-5", End: "0 17 * * 1-5", DesiredReplicas: 28},
	{Timezone: "Europe/Berlin", Start: "0 10 * * 6,0", End: "0 19 * * 6,0", DesiredReplicas: 16},
}

const (
	// inferenceFloor is the ScaledObject's minReplicaCount.
	inferenceFloor = 3
	// gpusPerPod is what one inference pod requests.
	gpusPerPod = 2
	// warmUp is the inference pods' creation to Ready, stated.
	warmUp = 2 * time.Minute
)

// world is one seed's traces, the same for every policy: the online
// replicas per step (scheduled and spikes apart) and the training jobs.
type world struct {
	start    time.Time
	step     time.Duration
	steps    int
	schedule *tide.CronSchedule
	// scheduled and spike are the online replicas the autoscaler asks at
	// each step: the schedule with its noise, and the unplanned spikes.
	scheduled, spike []int
	jobs             []jobSpec
}

// jobSpec is a training job as it arrives.
type jobSpec struct {
	id, gpus int
	arrive   int // step
	// work, interval and checkpoint are in seconds: the job's run at
	// full size, how often it checkpoints, and its usual checkpoint time.
	work, interval, checkpoint int
}

// newWorld draws a seed's traces.
func newWorld(cfg config, seed uint64) (*world, error) {
	schedule, err := tide.NewCronSchedule(inference, inferenceFloor)
	if err != nil {
		return nil, fmt.Errorf("the bench's inference schedule: %w", err)
	}
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		return nil, err
	}
	w := &world{start: cfg.start.In(loc), step: cfg.step, schedule: schedule}
	w.steps = int(time.Duration(cfg.days) * 24 * time.Hour / cfg.step)
	rng := rand.New(rand.NewPCG(seed, 1))
	w.scheduled = w.noisySchedule(rng, cfg.early, cfg.late)
	w.spike = w.spikes(rand.New(rand.NewPCG(seed, 2)), cfg.spikesPerDay)
	for i := range w.spike {
		w.spike[i] = min(w.spike[i], cfg.gpus/gpusPerPod-w.scheduled[i])
	}
	w.jobs = w.arrivals(rand.New(rand.NewPCG(seed, 3)), cfg.jobsPerDay, cfg.backlog)
	return w, nil
}

// noisySchedule is the schedule as the autoscaler follows it, per step.
func (w *world) noisySchedule(rng *rand.Rand, early, late time.Duration) []int {
	out := make([]int, w.steps)
	demand := tide.Demand{Steps: w.noisySteps(rng, early, late)}
	for i := range out {
		out[i] = demand.At(w.at(i))
	}
	return out
}

// noisySteps are the schedule's changes as the autoscaler makes them:
// every rise up to early before its time, every fall up to late after it,
// in order of time (Demand.At searches them by time). -early and -late
// are kept below the schedule's closest changes (config.validate), so that
// no change passes another.
func (w *world) noisySteps(rng *rand.Rand, early, late time.Duration) []tide.Step {
	steps := w.schedule.Steps(w.start, w.end())
	moved := make([]tide.Step, len(steps))
	for i, s := range steps {
		moved[i] = s
		switch {
		case i == 0:
		case s.Value > steps[i-1].Value:
			moved[i].At = s.At.Add(-time.Duration(rng.Float64() * float64(early)))
			if moved[i].At.Before(w.start) { // risen already at the start
				moved[i].At = w.start
			}
		default:
			moved[i].At = s.At.Add(time.Duration(rng.Float64() * float64(late)))
		}
	}
	sort.SliceStable(moved, func(i, j int) bool { return moved[i].At.Before(moved[j].At) })
	return moved
}

// closestChanges is the shortest time between two changes of the
// schedule over days from start.
func closestChanges(start time.Time, days int) (time.Duration, error) {
	schedule, err := tide.NewCronSchedule(inference, inferenceFloor)
	if err != nil {
		return 0, fmt.Errorf("the bench's inference schedule: %w", err)
	}
	steps := schedule.Steps(start, start.Add(time.Duration(days)*24*time.Hour))
	closest := time.Duration(math.MaxInt64)
	for i := 2; i < len(steps); i++ { // steps[0] is the start, not a change
		closest = min(closest, steps[i].At.Sub(steps[i-1].At))
	}
	return closest, nil
}

// peakReplicas is the highest replicas the schedule asks.
func peakReplicas() int {
	peak := inferenceFloor
	for _, tr := range inference {
		peak = max(peak, int(tr.DesiredReplicas))
	}
	return peak
}

// spikes are unplanned rises: Poisson arrivals, 1-4 extra pods for 15-90
// minutes, never more than the pool holds beside the schedule.
func (w *world) spikes(rng *rand.Rand, perDay float64) []int {
	out := make([]int, w.steps)
	perStep := perDay * w.step.Hours() / 24
	for i := range out {
		if rng.Float64() >= perStep {
			continue
		}
		pods := 1 + rng.IntN(4)
		length := int((15*time.Minute + time.Duration(rng.Float64()*float64(75*time.Minute))) / w.step)
		for k := i; k < min(i+length, w.steps); k++ {
			out[k] += pods
		}
	}
	return out
}

// arrivals are the training jobs: a backlog at the start, then Poisson
// arrivals; 1-8 GPUs, 2-24 hours of work, a checkpoint of 1-10 minutes
// every 15-60 minutes (at least three checkpoint times apart).
func (w *world) arrivals(rng *rand.Rand, perDay float64, backlog int) []jobSpec {
	var out []jobSpec
	sizes := []int{1, 2, 2, 4, 4, 8}
	intervals := []int{15, 30, 30, 60}
	draw := func(at int) {
		ckpt := 60 + rng.IntN(541)
		interval := max(60*intervals[rng.IntN(len(intervals))], 3*ckpt)
		out = append(out, jobSpec{id: len(out), gpus: sizes[rng.IntN(len(sizes))], arrive: at,
			work: 3600 * (2 + rng.IntN(23)), interval: interval, checkpoint: ckpt})
	}
	for range backlog {
		draw(0)
	}
	perStep := perDay * w.step.Hours() / 24
	for i := range w.steps {
		if rng.Float64() < perStep {
			draw(i)
		}
	}
	return out
}

// end is the end of the simulation.
func (w *world) end() time.Time { return w.at(w.steps) }

// at is step i's time.
func (w *world) at(i int) time.Time { return w.start.Add(time.Duration(i) * w.step) }

// checkpointTime is a job's k-th checkpoint: its usual time ±20%, the same
// draw under every policy.
func checkpointTime(seed uint64, j jobSpec, k int) int {
	f := 0.8 + 0.4*rand.New(rand.NewPCG(seed, uint64(j.id)<<20|uint64(k))).Float64()
	return int(math.Round(float64(j.checkpoint) * f))
}
