package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// Evictor evicts reclaimed pods for the node's memory.
type Evictor interface {
	// Rank is the node's reclaimed pods as the manager ranks them for
	// eviction (reclaim.PodsByNode), with their jobs read from the
	// cluster. A pod under the manager's stop notice is a candidate whose
	// job is lost anyway; a deleted one is Terminating.
	Rank(ctx context.Context) ([]reclaim.Pod, error)
	// Evict stops a pod now through the Eviction API, its end counted on
	// its TFJob as a disruption for online pods, not a failure.
	Evict(ctx context.Context, p reclaim.Pod) error
}

// relieveMemory evicts reclaimed pods while the node's memory is above
// the threshold, until what they use brings it 2 points below: least work
// lost first, with the manager's ranking. Pods it evicted and that still
// run count as released, so that one shortage is relieved once, by the
// agent or by the manager (which counts a terminating pod as released).
func (a *Agent) relieveMemory(ctx context.Context, pods []Pod) error {
	total, used, err := a.cfg.FS.NodeMemory()
	if err != nil {
		return fmt.Errorf("reading the node's memory: %w", err)
	}
	if a.metrics != nil && total > 0 {
		a.metrics.memoryUsed.Set(float64(used) / float64(total))
	}
	present := map[types.UID]Pod{}
	for _, p := range pods {
		present[p.UID] = p
	}
	for uid := range a.evicting {
		if _, ok := present[uid]; !ok {
			delete(a.evicting, uid)
		}
	}
	threshold := int64(a.cfg.Settings.MemoryThreshold)
	if threshold == 0 || used*100 < total*threshold {
		return nil
	}
	need := used - total*(threshold-2)/100
	for _, released := range a.evicting {
		need -= released
	}
	if need <= 0 {
		return nil
	}
	ranked, err := a.cfg.Evictor.Rank(ctx)
	if err != nil {
		return fmt.Errorf("ranking offline pods for a memory eviction: %w", err)
	}
	var candidates []reclaim.Pod
	for _, p := range ranked {
		pod, ok := present[types.UID(p.UID)]
		if _, evicted := a.evicting[pod.UID]; !ok || evicted {
			continue
		}
		ws, err := a.cfg.FS.MemoryWorkingSet(pod.group(a.cfg.FS))
		if err != nil {
			continue // its cgroup is gone: so is what it used
		}
		if p.Terminating {
			need -= ws
			continue
		}
		p.Batch = reclaim.Resources{Memory: ws}
		candidates = append(candidates, p)
	}
	if need <= 0 {
		return nil
	}
	var errs []error
	for _, v := range reclaim.ChooseVictims(candidates, reclaim.Resources{Memory: need}, time.Now()) {
		errs = append(errs, a.evict(ctx, v, used, total))
	}
	return errors.Join(errs...)
}

// evict evicts one victim and remembers what it releases.
func (a *Agent) evict(ctx context.Context, v reclaim.Pod, used, total int64) error {
	err := a.cfg.Evictor.Evict(ctx, v)
	switch {
	case apierrors.IsTooManyRequests(err):
		a.countEviction(EvictionRefused)
		a.cfg.Log.Info("The Eviction API refuses to evict an offline pod for memory (a PodDisruptionBudget?)", "pod", v.Namespace+"/"+v.Name)
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil // gone, or replaced
	case err != nil:
		return fmt.Errorf("evicting offline pod %s/%s for the node's memory: %w", v.Namespace, v.Name, err)
	}
	a.evicting[types.UID(v.UID)] = v.Batch.Memory
	a.countEviction(EvictionEvicted)
	a.cfg.Log.Info("Evicted an offline pod: the node's memory is above its threshold", "pod", v.Namespace+"/"+v.Name,
		"usedBytes", used, "totalBytes", total, "thresholdPercent", a.cfg.Settings.MemoryThreshold, "podBytes", v.Batch.Memory)
	return nil
}

func (a *Agent) countEviction(result string) {
	if a.metrics != nil {
		a.metrics.evictions.WithLabelValues(result).Inc()
	}
}
