package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/backfill-dev/backfill/internal/tide"
)

// policy is how training gives GPUs back to online pods.
type policy int

const (
	// priority: online pods preempt training at once (the scheduler's
	// preemption; Kubernetes' and Kueue's behaviour), the grace period
	// the only warning.
	priority policy = iota
	// reactive: Katalyst's tide controller, which every period evicts
	// offline pods at once when online pods are pending.
	reactive
	// loans: backfill's GPU loans, tide's decisions.
	loans
)

var policies = []policy{priority, reactive, loans}

func (p policy) String() string {
	return [...]string{"priority preemption", "reactive eviction", "backfill loans"}[p]
}

// job is a training job in the simulation; times in seconds.
type job struct {
	spec jobSpec
	// progress is work done, saved the part of it a checkpoint holds.
	progress, saved int
	// sinceCheckpoint counts work since the last checkpoint began.
	sinceCheckpoint int
	// checkpointLeft > 0 while a checkpoint is being written.
	checkpointLeft, checkpoints int
	// measured is the longest checkpoint the job has reported (from the
	// one it begins), 0 before the first.
	measured int
	// learnt is its checkpoint interval as the manager learns it: the gap
	// between two checkpoints it finished in one run, 0 before.
	learnt int
	// stopping: told to stop, at its checkpoint's end; deadline the step
	// by which it is stopped anyway (loans).
	stopping bool
	deadline int
	// terminating counts down a preempted job's grace period.
	terminating int
	// started and lastCheckpoint are steps, lastCheckpoint -1 for none
	// in this run.
	started, lastCheckpoint int
	running                 bool
}

// pod is an online pod waiting for a GPU.
type pod struct {
	spike   bool
	created int
}

// sim runs one policy on one world.
type sim struct {
	cfg  config
	w    *world
	pol  policy
	seed uint64
	now  int
	// queue holds jobs waiting for GPUs in arrival order; running those
	// holding GPUs.
	queue, running []*job
	arrived        int
	// online pods placed, per kind, and waiting.
	placedScheduled, placedSpike int
	pending                      []pod
	tideSettings                 tide.Settings
	workload                     tide.Workload
	r                            result
}

func newSim(cfg config, w *world, pol policy, seed uint64) *sim {
	return &sim{cfg: cfg, w: w, pol: pol, seed: seed, tideSettings: cfg.tide,
		workload: tide.Workload{Name: "online/inference", Replicas: w.schedule, GPUsPerPod: gpusPerPod, WarmUp: warmUp}}
}

// run simulates every step and returns the tallies.
func (s *sim) run() (result, error) {
	dt := int(s.w.step / time.Second)
	evalEvery := max(int(s.cfg.evaluate/s.w.step), 1)
	for s.now = 0; s.now < s.w.steps; s.now++ {
		s.admitArrivals()
		s.advance(dt)
		s.scaleOnline()
		s.placeOnline()
		switch s.pol {
		case priority, loans:
			s.preemptFor(true)
		case reactive:
			if s.now%max(int(s.cfg.reactivePeriod/s.w.step), 1) == 0 {
				s.preemptFor(false)
			}
		}
		if s.pol == loans {
			if s.now%evalEvery == 0 {
				if err := s.lend(); err != nil {
					return result{}, err
				}
			}
		} else if len(s.pending) == 0 {
			s.startFirstFit()
		}
		s.account(dt)
	}
	for _, p := range s.pending {
		s.recordWait(p)
	}
	return s.r, nil
}

func (s *sim) admitArrivals() {
	for s.arrived < len(s.w.jobs) && s.w.jobs[s.arrived].arrive <= s.now {
		s.queue = append(s.queue, &job{spec: s.w.jobs[s.arrived], lastCheckpoint: -1})
		s.arrived++
	}
}

// held is the GPUs training holds, running or terminating.
func (s *sim) held() int {
	n := 0
	for _, j := range s.running {
		n += j.spec.gpus
	}
	return n
}

func (s *sim) onlineGPUs() int { return (s.placedScheduled + s.placedSpike) * gpusPerPod }

func (s *sim) free() int { return s.cfg.gpus - s.onlineGPUs() - s.held() }

// advance moves every running job on by dt seconds.
func (s *sim) advance(dt int) {
	kept := s.running[:0]
	for _, j := range s.running {
		if s.advanceJob(j, dt) {
			kept = append(kept, j)
		}
	}
	s.running = kept
}

// advanceJob reports whether the job still holds its GPUs.
func (s *sim) advanceJob(j *job, dt int) bool {
	switch {
	case j.terminating > 0:
		j.terminating -= dt
		if j.terminating <= 0 {
			s.requeue(j)
			return false
		}
		return true
	case j.stopping && s.now >= j.deadline:
		s.r.deadlineKills++
		s.lose(j)
		s.requeue(j)
		return false
	case j.checkpointLeft > 0:
		j.checkpointLeft -= dt
		if j.checkpointLeft <= 0 {
			if j.lastCheckpoint >= 0 && !j.stopping {
				j.learnt = s.now - j.lastCheckpoint
			}
			j.saved, j.sinceCheckpoint, j.lastCheckpoint = j.progress, 0, s.now
			if j.stopping {
				s.r.returnsOnTime++
				s.requeue(j)
				return false
			}
		}
		return true
	}
	j.progress += dt
	j.sinceCheckpoint += dt
	if j.progress >= j.spec.work {
		s.r.jobsDone++
		j.running = false
		return false
	}
	if j.sinceCheckpoint >= j.spec.interval {
		s.beginCheckpoint(j)
	}
	return true
}

func (s *sim) beginCheckpoint(j *job) {
	t := checkpointTime(s.seed, j.spec, j.checkpoints)
	j.checkpoints++
	j.checkpointLeft, j.measured = t, max(j.measured, t)
}

// lose counts the work since the last checkpoint as lost.
func (s *sim) lose(j *job) {
	s.r.lostGPUSeconds += float64((j.progress - j.saved) * j.spec.gpus)
	j.progress, j.sinceCheckpoint = j.saved, 0
}

// requeue puts a stopped job back in the queue at its arrival place.
func (s *sim) requeue(j *job) {
	j.running, j.stopping, j.terminating, j.checkpointLeft = false, false, 0, 0
	j.progress, j.sinceCheckpoint = j.saved, 0
	i := sort.Search(len(s.queue), func(i int) bool { return s.queue[i].spec.id > j.spec.id })
	s.queue = append(s.queue, nil)
	copy(s.queue[i+1:], s.queue[i:])
	s.queue[i] = j
}

// scaleOnline brings the online pods to the autoscaler's replicas: new
// pods wait, fewer pods go (waiting ones first).
func (s *sim) scaleOnline() {
	want := map[bool]int{false: s.w.scheduled[s.now], true: s.w.spike[s.now]}
	for _, spike := range []bool{false, true} {
		placed := &s.placedScheduled
		if spike {
			placed = &s.placedSpike
		}
		waiting := 0
		for _, p := range s.pending {
			if p.spike == spike {
				waiting++
			}
		}
		for ; *placed+waiting < want[spike]; waiting++ {
			s.pending = append(s.pending, pod{spike: spike, created: s.now})
		}
		for excess := *placed + waiting - want[spike]; excess > 0; excess-- {
			if waiting > 0 {
				s.dropNewestPending(spike)
				waiting--
				continue
			}
			*placed--
		}
	}
}

func (s *sim) dropNewestPending(spike bool) {
	for i := len(s.pending) - 1; i >= 0; i-- {
		if s.pending[i].spike == spike {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return
		}
	}
}

// placeOnline binds waiting online pods to free GPUs, oldest first.
func (s *sim) placeOnline() {
	for len(s.pending) > 0 && s.free() >= gpusPerPod {
		p := s.pending[0]
		s.pending = s.pending[1:]
		if p.spike {
			s.placedSpike++
		} else {
			s.placedScheduled++
		}
		s.recordWait(p)
	}
}

func (s *sim) recordWait(p pod) {
	wait := float64(s.now-p.created) * s.w.step.Seconds()
	if p.spike {
		s.r.spikeWaits = append(s.r.spikeWaits, wait)
	} else {
		s.r.scheduledWaits = append(s.r.scheduledWaits, wait)
	}
	if wait > 0 {
		if p.spike {
			s.r.missedSpike++
		} else {
			s.r.missedScheduled++
		}
	}
}

// preemptFor stops training for the waiting online pods' GPUs beyond
// what is free or already terminating: the latest started first (the
// scheduler's last tie-break among equal priorities), whole jobs (a
// gang's other pods follow). With atOnce false only pods that waited a
// step are seen (a controller's period, not the scheduler's own pass).
func (s *sim) preemptFor(atOnce bool) {
	needed := 0
	for _, p := range s.pending {
		if atOnce || p.created < s.now {
			needed += gpusPerPod
		}
	}
	needed -= max(s.free(), 0)
	for _, j := range s.running {
		if j.terminating > 0 {
			needed -= j.spec.gpus
		}
	}
	victims := append([]*job(nil), s.running...)
	sort.SliceStable(victims, func(a, b int) bool { return victims[a].started > victims[b].started })
	for _, j := range victims {
		if needed <= 0 {
			return
		}
		if j.terminating > 0 {
			continue
		}
		s.lose(j)
		s.r.preemptions++
		j.terminating = int(s.cfg.grace / time.Second)
		needed -= j.spec.gpus
	}
}

// startFirstFit starts queued jobs on free GPUs, in order, skipping those
// that do not fit.
func (s *sim) startFirstFit() {
	for i := 0; i < len(s.queue) && s.free() > 0; {
		if j := s.queue[i]; j.spec.gpus <= s.free() {
			s.start(i)
			continue
		}
		i++
	}
}

func (s *sim) start(i int) {
	j := s.queue[i]
	s.queue = append(s.queue[:i], s.queue[i+1:]...)
	j.running, j.started, j.lastCheckpoint = true, s.now, -1
	s.running = append(s.running, j)
}

// account adds the step's GPU-seconds and checks that nothing holds more
// than the pool.
func (s *sim) account(dt int) {
	held, online := s.held(), s.onlineGPUs()
	if held+online > s.cfg.gpus {
		s.r.overcommitted++
	}
	s.r.trainingGPUSeconds += float64(held * dt)
	s.r.idleGPUSeconds += float64((s.cfg.gpus - online) * dt)
	s.r.onlineGPUSeconds += float64(online * dt)
	s.r.capacityGPUSeconds += float64(s.cfg.gpus * dt)
}

// lend is backfill's loans at one evaluation: notices and starts from
// tide's decisions on the pool as it is now.
func (s *sim) lend() error {
	now := s.w.at(s.now)
	demand, err := tide.PoolDemand([]tide.Workload{s.workload}, now, now.Add(s.cfg.horizon))
	if err != nil {
		return fmt.Errorf("forecast at %s: %w", now, err)
	}
	pool := tide.Pool{GPUs: s.cfg.gpus, Demand: demand, OnlineInUse: s.onlineGPUs() + len(s.pending)*gpusPerPod, Loans: s.loans()}
	byID := map[string]*job{}
	for _, j := range s.running {
		byID[jobName(j)] = j
	}
	for _, r := range tide.Returns(now, pool, s.tideSettings) {
		j := byID[r.Job]
		if j == nil || j.stopping || j.terminating > 0 || r.Notice.After(now) {
			continue
		}
		s.notice(j, s.stepOf(r.Deadline))
	}
	pool.Loans = s.loans()
	for i := 0; i < len(s.queue) && len(s.pending) == 0; {
		j := s.queue[i]
		if j.spec.gpus > s.free() {
			i++
			continue
		}
		a := tide.Admit(now, pool, s.tideSettings, tide.Request{GPUs: j.spec.gpus,
			CheckpointTime: time.Duration(j.measured) * time.Second, CheckpointInterval: time.Duration(j.learnt) * time.Second})
		if !a.OK {
			s.r.refused++
			i++
			continue
		}
		s.start(i)
		pool.Loans = append(pool.Loans, s.loan(j))
	}
	return nil
}

// notice tells a job to checkpoint and stop by deadline.
func (s *sim) notice(j *job, deadline int) {
	j.stopping, j.deadline = true, deadline
	s.r.notices++
	if j.checkpointLeft > 0 {
		return
	}
	if j.sinceCheckpoint == 0 {
		s.r.returnsOnTime++
		for i, r := range s.running {
			if r == j {
				s.running = append(s.running[:i], s.running[i+1:]...)
				break
			}
		}
		s.requeue(j)
		return
	}
	s.beginCheckpoint(j)
}

func (s *sim) stepOf(t time.Time) int { return int(t.Sub(s.w.start) / s.w.step) }

func jobName(j *job) string { return fmt.Sprintf("job-%d", j.spec.id) }

// loans are the running jobs as tide sees them.
func (s *sim) loans() []tide.Loan {
	out := make([]tide.Loan, 0, len(s.running))
	for _, j := range s.running {
		out = append(out, s.loan(j))
	}
	return out
}

func (s *sim) loan(j *job) tide.Loan {
	l := tide.Loan{Job: jobName(j), GPUs: j.spec.gpus, Started: s.w.at(j.started),
		CheckpointTime: time.Duration(j.measured) * time.Second, CheckpointInterval: time.Duration(j.learnt) * time.Second}
	if j.lastCheckpoint >= 0 {
		l.LastCheckpoint = s.w.at(j.lastCheckpoint)
	}
	if j.stopping {
		l.Deadline = s.w.at(j.deadline)
	}
	if j.terminating > 0 {
		l.Deadline = s.w.at(s.now + j.terminating/int(s.w.step/time.Second) + 1)
	}
	return l
}
