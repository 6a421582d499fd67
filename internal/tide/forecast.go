package tide

import (
	"fmt"
	"sort"
	"time"
)

// Workload is one online Deployment or StatefulSet of a pool.
type Workload struct {
	// Name is namespace/name, for explanations.
	Name string
	// Replicas is its forecast: a CronSchedule or a History.
	Replicas ReplicaForecast
	// GPUsPerPod is what one pod requests of the pool's GPU resource.
	GPUsPerPod int
	// WarmUp is from pod creation to Ready: each rise of the workload
	// needs its GPUs that much earlier.
	WarmUp time.Duration
}

// PoolDemand is the GPUs the pool's online workloads need over [from, to):
// the sum of replicas x GPUs per pod, each workload's rises moved earlier
// by its warm-up.
func PoolDemand(workloads []Workload, from, to time.Time) (Demand, error) {
	if !from.Before(to) {
		return Demand{}, fmt.Errorf("forecast horizon from %s to %s: the end must come after the start", from, to)
	}
	var each [][]Step
	for _, w := range workloads {
		if w.Replicas == nil {
			return Demand{}, fmt.Errorf("workload %s: no forecast; give it a schedule or history", w.Name)
		}
		if w.GPUsPerPod < 0 || w.WarmUp < 0 {
			return Demand{}, fmt.Errorf("workload %s: GPUs per pod %d and warm-up %s must not be negative", w.Name, w.GPUsPerPod, w.WarmUp)
		}
		replicas := w.Replicas.Steps(from, to.Add(w.WarmUp))
		gpus := make([]Step, len(replicas))
		for i, s := range replicas {
			gpus[i] = Step{At: s.At, Value: s.Value * w.GPUsPerPod}
		}
		each = append(each, lookAhead(gpus, from, to, w.WarmUp))
	}
	return Demand{Steps: sum(each, from), From: from, To: to}, nil
}

// sum adds step series that each start at from.
func sum(series [][]Step, from time.Time) []Step {
	times := []time.Time{from}
	for _, steps := range series {
		for _, s := range steps {
			times = append(times, s.At)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	out := make([]Step, 0, len(times))
	for _, t := range times {
		total := 0
		for _, steps := range series {
			total += Demand{Steps: steps}.At(t)
		}
		out = append(out, Step{At: t, Value: total})
	}
	return merged(out)
}
