package main

import (
	"math"
	"sort"
)

// result is one policy's tallies on one seed.
type result struct {
	// GPU-seconds: held by training, lost (work since the last
	// checkpoint of a stopped job), idle of online, online, the pool.
	trainingGPUSeconds, lostGPUSeconds, idleGPUSeconds, onlineGPUSeconds, capacityGPUSeconds float64
	// scheduledWaits and spikeWaits are every online pod's seconds from
	// creation to a GPU.
	scheduledWaits, spikeWaits []float64
	// missed: online pods that waited for a GPU training held.
	missedScheduled, missedSpike int
	// preemptions: jobs stopped at once; notices: jobs told to
	// checkpoint and stop; returnsOnTime of those stopped by their
	// checkpoint, deadlineKills at their deadline.
	preemptions, notices, returnsOnTime, deadlineKills int
	// refused: times a loan was refused to a job that fitted (too short
	// to reach a checkpoint).
	refused, jobsDone int
	// overcommitted counts steps where training and online held more
	// than the pool: must be 0.
	overcommitted int
}

// summary is what the table and the files show of a result.
type summary struct {
	Policy              string  `json:"policy"`
	Seed                string  `json:"seed"`
	TrainingGPUHours    float64 `json:"trainingGPUHours"`
	IdleGPUHours        float64 `json:"idleGPUHours"`
	LostGPUHours        float64 `json:"lostGPUHours"`
	LostPercent         float64 `json:"lostPercent"`
	ScheduledWaitP50    float64 `json:"scheduledWaitP50Seconds"`
	ScheduledWaitP99    float64 `json:"scheduledWaitP99Seconds"`
	ScheduledWaitMax    float64 `json:"scheduledWaitMaxSeconds"`
	SpikeWaitP50        float64 `json:"spikeWaitP50Seconds"`
	SpikeWaitP99        float64 `json:"spikeWaitP99Seconds"`
	SpikeWaitMax        float64 `json:"spikeWaitMaxSeconds"`
	ScheduledPods       int     `json:"scheduledPods"`
	SpikePods           int     `json:"spikePods"`
	MissedReturns       int     `json:"missedReturns"`
	MissedOnSchedule    int     `json:"missedReturnsScheduled"`
	MissedOnSpikes      int     `json:"missedReturnsSpikes"`
	Preemptions         int     `json:"preemptions"`
	Notices             int     `json:"notices"`
	CheckpointedReturns int     `json:"checkpointedReturns"`
	DeadlineKills       int     `json:"deadlineKills"`
	RefusedShortLoans   int     `json:"refusedShortLoans"`
	JobsDone            int     `json:"jobsDone"`
}

func (r result) summary(pol policy, seed string) summary {
	h := func(gpuSeconds float64) float64 { return gpuSeconds / 3600 }
	s := summary{Policy: pol.String(), Seed: seed,
		TrainingGPUHours: h(r.trainingGPUSeconds), IdleGPUHours: h(r.idleGPUSeconds), LostGPUHours: h(r.lostGPUSeconds),
		ScheduledWaitP50: quantile(r.scheduledWaits, 0.50), ScheduledWaitP99: quantile(r.scheduledWaits, 0.99), ScheduledWaitMax: quantile(r.scheduledWaits, 1),
		SpikeWaitP50: quantile(r.spikeWaits, 0.50), SpikeWaitP99: quantile(r.spikeWaits, 0.99), SpikeWaitMax: quantile(r.spikeWaits, 1),
		ScheduledPods: len(r.scheduledWaits), SpikePods: len(r.spikeWaits),
		MissedReturns: r.missedScheduled + r.missedSpike, MissedOnSchedule: r.missedScheduled, MissedOnSpikes: r.missedSpike,
		Preemptions: r.preemptions, Notices: r.notices, CheckpointedReturns: r.returnsOnTime, DeadlineKills: r.deadlineKills,
		RefusedShortLoans: r.refused, JobsDone: r.jobsDone}
	if r.trainingGPUSeconds > 0 {
		s.LostPercent = 100 * r.lostGPUSeconds / r.trainingGPUSeconds
	}
	return s
}

// quantile is the nearest-rank quantile q of xs; 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// median is the per-field median of a policy's seeds.
func median(rows []summary) summary {
	m := summary{Policy: rows[0].Policy, Seed: "median"}
	mid := func(get func(summary) float64) float64 {
		xs := make([]float64, len(rows))
		for i, r := range rows {
			xs[i] = get(r)
		}
		sort.Float64s(xs)
		if len(xs)%2 == 1 {
			return xs[len(xs)/2]
		}
		return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	m.TrainingGPUHours = mid(func(s summary) float64 { return s.TrainingGPUHours })
	m.IdleGPUHours = mid(func(s summary) float64 { return s.IdleGPUHours })
	m.LostGPUHours = mid(func(s summary) float64 { return s.LostGPUHours })
	m.LostPercent = mid(func(s summary) float64 { return s.LostPercent })
	m.ScheduledWaitP50 = mid(func(s summary) float64 { return s.ScheduledWaitP50 })
	m.ScheduledWaitP99 = mid(func(s summary) float64 { return s.ScheduledWaitP99 })
	m.ScheduledWaitMax = mid(func(s summary) float64 { return s.ScheduledWaitMax })
	m.SpikeWaitP50 = mid(func(s summary) float64 { return s.SpikeWaitP50 })
	m.SpikeWaitP99 = mid(func(s summary) float64 { return s.SpikeWaitP99 })
	m.SpikeWaitMax = mid(func(s summary) float64 { return s.SpikeWaitMax })
	m.MissedReturns = int(mid(func(s summary) float64 { return float64(s.MissedReturns) }))
	m.MissedOnSchedule = int(mid(func(s summary) float64 { return float64(s.MissedOnSchedule) }))
	m.MissedOnSpikes = int(mid(func(s summary) float64 { return float64(s.MissedOnSpikes) }))
	m.Preemptions = int(mid(func(s summary) float64 { return float64(s.Preemptions) }))
	m.Notices = int(mid(func(s summary) float64 { return float64(s.Notices) }))
	m.CheckpointedReturns = int(mid(func(s summary) float64 { return float64(s.CheckpointedReturns) }))
	m.DeadlineKills = int(mid(func(s summary) float64 { return float64(s.DeadlineKills) }))
	m.RefusedShortLoans = int(mid(func(s summary) float64 { return float64(s.RefusedShortLoans) }))
	m.JobsDone = int(mid(func(s summary) float64 { return float64(s.JobsDone) }))
	return m
}
