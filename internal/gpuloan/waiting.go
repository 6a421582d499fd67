package gpuloan

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// waitingPod is an online pod the scheduler found no GPU for.
type waitingPod struct {
	uid       types.UID
	name      string
	gpus      int
	placement placement
	// since is when the scheduler last said it cannot place it.
	since time.Time
}

// waitingOnline lists the online pods that request GPUs and that the
// scheduler could not place (PodScheduled False, Unschedulable). The view
// holds bound pods only, so these are read from the apiserver: few pods
// are ever unbound.
func waitingOnline(ctx context.Context, r client.Reader, offlineClass string) ([]waitingPod, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.MatchingFields{"spec.nodeName": ""}); err != nil {
		return nil, fmt.Errorf("listing unscheduled pods for online pods waiting for a GPU: %w", err)
	}
	var out []waitingPod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending || colocation.PodTier(p, offlineClass) != colocation.TierOnline {
			continue
		}
		gpus := gpusOf(p)
		if gpus <= 0 {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				out = append(out, waitingPod{uid: p.UID, name: p.Namespace + "/" + p.Name, gpus: gpus, placement: placementOf(&p.Spec), since: c.LastTransitionTime.Time})
			}
		}
	}
	return out, nil
}

// waits counts the online pods waiting for a GPU of a pool where training
// holds GPUs: each pod once as a missed return, and the time it waited
// since the last decision (or since it began to wait), in the first such
// pool it fits. It returns the pools where online pods wait, with the GPUs
// they wait for: a pod that fits several waits in each.
func (c *Controller) waits(waiting []waitingPod, cl *cluster, now time.Time) map[string]int {
	out := map[string]int{}
	seen := map[types.UID]bool{}
	for _, w := range waiting {
		seen[w.uid] = true
		counted := false
		for _, name := range sortedPools(cl.pools) {
			if !w.placement.fits(name) {
				continue
			}
			out[name] += w.gpus
			if counted || cl.lent(name)+cl.taken[name] == 0 {
				continue
			}
			counted = true
			if !c.missed[w.uid] {
				c.missed[w.uid] = true
				metrics.GPULoanMissedReturn(name)
				c.log.Info("An online pod waits for a GPU that training holds: a missed return", "pod", w.name, "pool", name, "gpus", w.gpus)
			}
			from := w.since
			if c.lastSync.After(from) {
				from = c.lastSync
			}
			if now.After(from) {
				metrics.GPULoanOnlineWaited(name, now.Sub(from))
			}
		}
	}
	for uid := range c.missed {
		if !seen[uid] {
			delete(c.missed, uid)
		}
	}
	return out
}
