package reclaim

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// readSignals reads every node's online signal and publishes the
// workloads' latency; nil when nothing listens or the read fails, which
// changes no node. A workload whose opt-in is wrong is logged once.
func (c *Controller) readSignals(ctx context.Context, now time.Time, pods []*clusterview.Pod) map[string]OnlineSignal {
	if c.signals == nil {
		return nil
	}
	for _, p := range pods {
		key := p.Namespace + "/" + p.Workload
		if p.LatencyError != "" && !c.misdeclared[key] {
			c.misdeclared[key] = true
			c.log.Info("An online workload's latency opt-in is wrong: its pods are not listened to until it is fixed", "workload", key, "pod", p.Namespace+"/"+p.Name, "error", p.LatencyError)
		}
	}
	signals, latencies, err := c.signals.Read(ctx, now, pods)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error(err, "Reading the online signal: nodes keep their holds, none begins or ends until it works again")
		}
		return nil
	}
	p99 := map[[3]string]time.Duration{}
	for _, l := range latencies {
		for peers, v := range l.P99 {
			p99[[3]string{l.Namespace, l.Workload, peers}] = v
		}
	}
	metrics.OnlineLatencies(p99)
	return signals
}

// heldChanged counts, and tells the node's events, when a hold begins,
// gives back a step or ends; refusedStep: a step was due, but the Eviction
// API refused every victim of it.
func (c *Controller) heldChanged(node string, before *OnlineHold, d Decision, refusedStep bool) {
	after := d.Online
	signal := ""
	if after != nil {
		signal = after.Signal
	}
	metrics.NodeOnlineHold(node, signal)
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, UID: types.UID(node)}}
	switch {
	case before == nil && after != nil:
		metrics.OnlineActed(metrics.OnlineHold)
		c.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "OnlineHarmed", "Hold",
			"Online pods suffer beside offline pods: %s; reclaimed capacity stops growing and stays at most at what offline pods hold (%s CPU)", after.Why, colocation.CPUString(after.MilliCPU))
	case before != nil && after == nil:
		metrics.OnlineActed(metrics.OnlineRelease)
		c.recorder.Eventf(obj, nil, corev1.EventTypeNormal, "OnlineHealthy", "Release",
			"Online pods have been healthy for %s: reclaimed capacity grows again", c.settings.OnlineRecoverAfter)
	case before != nil && refusedStep:
		c.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "OnlineHarmed", "GiveBackRefused",
			"Online pods still suffer after %s: %s; a step of reclaimed CPU is due, but the Eviction API refused to evict the offline pods chosen (a PodDisruptionBudget?): they keep %s CPU, and the step is tried again when the cool-down ends at %s",
			harmedFor(after, d.At), after.Why, colocation.CPUString(d.Held.MilliCPU-d.Evicting.MilliCPU), d.CooldownUntil.Format(time.TimeOnly))
	case before != nil && after.Steps > before.Steps:
		metrics.OnlineActed(metrics.OnlineGiveBack)
		c.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "OnlineHarmed", "GiveBack",
			"Online pods still suffer after %s: %s; giving back a step of reclaimed CPU, down to %s", harmedFor(after, d.At), after.Why, colocation.CPUString(after.MilliCPU))
	}
}

// harmedFor is how long the harm of a hold has lasted at now.
func harmedFor(h *OnlineHold, now time.Time) time.Duration {
	return now.Sub(h.HarmSince).Round(time.Second)
}

// stepReleased is the hold after a decision's evictions were carried out
// (released: the batch CPU they release): a step lowers the hold only as
// far as the evictions released CPU, and a step that released nothing is
// taken back whole (undone), so that the Eviction API refusing its victims
// does not let steps pile up until the next eviction takes them all at
// once. Its cool-down still runs: the next try waits for it.
func stepReleased(before, after *OnlineHold, held, released int64) (hold *OnlineHold, undone bool) {
	if before == nil || after == nil || after.Steps <= before.Steps {
		return after, false
	}
	h := *after
	if released <= 0 {
		h.MilliCPU, h.Steps = before.MilliCPU, before.Steps
		return &h, true
	}
	h.MilliCPU = max(h.MilliCPU, held-released)
	return &h, false
}

// holdChanged reports whether a hold changed in what the next decision
// reads: its numbers may move without a write.
func holdChanged(before, after *OnlineHold) bool {
	if before == nil || after == nil {
		return before != after
	}
	return before.Signal != after.Signal || !before.Since.Equal(after.Since) || !before.HarmSince.Equal(after.HarmSince) ||
		!before.HealthySince.Equal(after.HealthySince) || before.MilliCPU != after.MilliCPU || before.Steps != after.Steps
}
