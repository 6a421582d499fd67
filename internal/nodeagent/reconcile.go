package nodeagent

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// want is what the agent wants of its node's cgroups at one tick.
type want struct {
	// measured: use has been measured, so the ceiling is decided. Before
	// the first measure the reclaimed pods' quotas are left as they are.
	measured bool
	// ceiling is the offline ceiling in milli-cores, -1 none.
	ceiling int64
	// idle puts reclaimed pods in the scheduler's idle class.
	idle bool
}

// reconcile makes the cgroups of every pod of the node what w asks for,
// from what is on the node rather than from what the agent remembers
// setting: a ceiling or idle class left by an agent that died, or on a
// pod that is no longer reclaimed, is lifted all the same. Every write is
// of a value that differs.
func (a *Agent) reconcile(pods []Pod, w want) error {
	parts := a.parts(pods, w)
	var errs []error
	for _, p := range pods {
		group := p.group(a.cfg.FS)
		if !a.cfg.FS.Exists(group) {
			continue // not made yet, or gone
		}
		var err error
		if p.Reclaimed {
			err = a.reconcileReclaimed(p, w, parts)
		} else {
			err = a.release(p)
		}
		if err != nil && a.cfg.FS.Exists(group) { // a pod gone meanwhile needs nothing
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// parts shares the ceiling among the reclaimed pods it binds, as quotas
// in µs per cfsPeriod; nil when no ceiling applies.
func (a *Agent) parts(pods []Pod, w want) map[types.UID]int64 {
	if !w.measured || w.ceiling < 0 {
		return nil
	}
	var claims []claim
	for _, p := range pods {
		if capped(p) && a.cfg.FS.Exists(p.group(a.cfg.FS)) {
			claims = append(claims, claim{uid: p.UID, weight: p.Weight, limit: limitMilli(p.Limits.Pod)})
		}
	}
	out := make(map[types.UID]int64, len(claims))
	for uid, milli := range share(w.ceiling, claims) {
		out[uid] = milli * cfsPeriod / 1000
	}
	return out
}

// capped reports whether a reclaimed pod takes the ceiling. While the
// kubelet applies a resize it does not: on cgroup v1 a container's new
// quota above the pod's ceiling is refused, and the kubelet's retry would
// fail as long as the ceiling stays. The kubelet sets PodResizeInProgress
// also when a try failed, so a resize this refuses succeeds on the next.
func capped(p Pod) bool { return p.Reclaimed && p.Resize != ResizeApplying }

// reconcileReclaimed gives a reclaimed pod its part of the ceiling, or the
// kubelet's quotas when it has none, and the idle class as w asks, except
// while its resources are being resized: the kernel refuses the kubelet's
// cpu.shares (v2: cpu.weight) writes on an idle cgroup.
func (a *Agent) reconcileReclaimed(p Pod, w want, parts map[types.UID]int64) error {
	var errs []error
	if w.measured || !capped(p) {
		quota, ok := parts[p.UID]
		if !ok {
			quota = -1
		}
		if err := a.cfg.FS.SetPodCPUCeiling(p.group(a.cfg.FS), quota, p.Limits); err != nil {
			what := "capping the CPU of"
			if quota < 0 {
				what = "lifting the CPU ceiling of"
			}
			errs = append(errs, fmt.Errorf("%s offline pod %s/%s: %w", what, p.Namespace, p.Name, err))
		}
	}
	errs = append(errs, a.idle(p, w.idle && p.Resize == ResizeNone))
	return errors.Join(errs...)
}

// release takes from a pod that is not reclaimed whatever holds its CPU
// below the kubelet's: a quota under the kubelet's own and the idle class,
// whoever left them. It lowers nothing, and leaves the quotas of a pod
// being resized to the kubelet.
func (a *Agent) release(p Pod) error {
	var errs []error
	if p.Resize == ResizeNone {
		if err := a.cfg.FS.RestorePodCPUQuota(p.group(a.cfg.FS), p.Limits); err != nil {
			errs = append(errs, fmt.Errorf("putting back the kubelet's CPU quota of pod %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	errs = append(errs, a.idle(p, false))
	return errors.Join(errs...)
}

// idle puts a pod in the scheduler's idle class or takes it out. A kernel
// without cpu.idle is told once, when the agent wants the class; the
// ceiling still holds.
func (a *Agent) idle(p Pod, idle bool) error {
	err := a.cfg.FS.SetCPUIdle(p.group(a.cfg.FS), idle)
	switch {
	case errors.Is(err, nodefs.ErrNoCPUIdle):
		if idle && !a.noIdleTold {
			a.cfg.Log.Info("Offline pods stay in the normal scheduling class: CPU weights and the ceiling alone protect online pods", "reason", err.Error())
			a.noIdleTold = true
		}
		return nil
	case err != nil:
		return fmt.Errorf("setting cpu.idle of pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}
