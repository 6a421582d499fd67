package nodeagent

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// observeWaits exports each online pod's CPU wait since the last tick:
// the time during which at least one of its threads waited for a CPU.
func (a *Agent) observeWaits(pods []Pod) error {
	if a.metrics == nil {
		return nil
	}
	seen := map[types.UID]bool{}
	var errs []error
	for _, p := range pods {
		group := p.group(a.cfg.FS)
		if p.Reclaimed || !a.cfg.FS.Exists(group) {
			continue
		}
		seen[p.UID] = true
		before, known := a.waitsSeen[p.UID]
		waited, err := a.waits.Read(group)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading how long online pod %s/%s waited for CPU: %w", p.Namespace, p.Name, err))
			continue
		}
		a.waitsSeen[p.UID] = waited
		a.metrics.waited[p.UID] = [2]string{p.Namespace, p.Name}
		counter := a.metrics.onlineWait.WithLabelValues(p.Namespace, p.Name)
		if known && waited > before {
			counter.Add((waited - before).Seconds())
		}
	}
	for uid, labels := range a.metrics.waited {
		if !seen[uid] {
			a.metrics.onlineWait.DeleteLabelValues(labels[0], labels[1])
			delete(a.metrics.waited, uid)
			delete(a.waitsSeen, uid)
		}
	}
	return errors.Join(errs...)
}

// record publishes a tick's measurements.
func (a *Agent) record(now, prev *reading, u usage, engaged bool) {
	cores := func(milli int64) float64 { return float64(milli) / 1000 }
	t := Tick{At: now.at, Capacity: cores(u.capacity), Online: cores(u.online()), Offline: cores(u.offline),
		System: cores(u.system()), Ceiling: -1, Engaged: engaged}
	if a.ceiling >= 0 {
		t.Ceiling = cores(a.ceiling)
	}
	a.mu.Lock()
	a.tick = t
	a.mu.Unlock()
	if a.metrics == nil {
		return
	}
	a.metrics.ceiling.Set(t.Ceiling)
	a.metrics.used.WithLabelValues(string(colocation.TierOnline)).Set(t.Online)
	a.metrics.used.WithLabelValues(string(colocation.TierOffline)).Set(t.Offline)
	a.metrics.used.WithLabelValues(tierSystem).Set(t.System)
	a.metrics.throttled.Add(now.throttledSince(prev).Seconds())
}
