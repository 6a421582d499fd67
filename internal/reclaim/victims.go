package reclaim

import (
	"cmp"
	"slices"
	"time"
)

// workLost is what evicting a pod costs: the work of its whole job since
// the job's last checkpoint (or start), replicas x time, since evicting one
// replica of a distributed job stops all of it. It is 0 for a job already
// hit, whose work is lost anyway.
func workLost(p Pod, hit map[string]bool, now time.Time) time.Duration {
	if p.Job == nil {
		return now.Sub(p.Started)
	}
	if p.Job.Disrupted || hit[jobKey(p.Job)] {
		return 0
	}
	return time.Duration(p.Job.Replicas) * now.Sub(p.Job.Since)
}

func jobKey(j *Job) string { return j.Namespace + "/" + j.Name }

// ChooseVictims picks the offline pods to evict so that what they hold
// covers need, losing the least work: least work lost first, then lowest
// priority, then the most recently started. It never evicts more than it
// needs: a pod whose release the others already cover is spared. Pods
// already terminating are not candidates (what they hold is released).
// The manager ranks with it what pods hold of reclaimed capacity, the
// node agent what they use of a node's memory.
func ChooseVictims(pods []Pod, need Resources, now time.Time) []Pod {
	var candidates []Pod
	for _, p := range pods {
		if !p.Terminating && relieves(p.Batch, need) {
			candidates = append(candidates, p)
		}
	}
	hit := map[string]bool{}
	var chosen []Pod
	left := need
	for !(Resources{}).Covers(left) && len(candidates) > 0 {
		best := slices.MinFunc(candidates, func(a, b Pod) int {
			return cmp.Or(
				cmp.Compare(workLost(a, hit, now), workLost(b, hit, now)),
				cmp.Compare(a.Priority, b.Priority),
				b.Started.Compare(a.Started),
				cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name),
			)
		})
		candidates = slices.DeleteFunc(candidates, func(p Pod) bool { return p.UID == best.UID })
		if !relieves(best.Batch, left) {
			continue
		}
		chosen = append(chosen, best)
		left = left.Sub(best.Batch)
		if best.Job != nil {
			hit[jobKey(best.Job)] = true
		}
	}
	return spareUnneeded(chosen, need)
}

// relieves reports whether holding b helps cover a need that is left.
func relieves(b, left Resources) bool {
	return (left.MilliCPU > 0 && b.MilliCPU > 0) || (left.Memory > 0 && b.Memory > 0)
}

// spareUnneeded drops, last chosen first, every victim without which the
// others still cover need.
func spareUnneeded(chosen []Pod, need Resources) []Pod {
	total := Resources{}
	for _, p := range chosen {
		total = total.Add(p.Batch)
	}
	for i := len(chosen) - 1; i >= 0; i-- {
		if rest := total.Sub(chosen[i].Batch); rest.Covers(need) {
			total = rest
			chosen = slices.Delete(chosen, i, i+1)
		}
	}
	return chosen
}
