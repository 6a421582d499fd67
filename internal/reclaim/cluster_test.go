package reclaim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
)

func TestNodesOf(t *testing.T) {
	mk := func(name, job string, started time.Time) *clusterview.Pod {
		return &clusterview.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID("uid-" + name)},
			Node: "n", Tier: colocation.TierOffline, TFJob: job, Started: started, Batch: res(1000, 1)}
	}
	noticed := mk("saved-worker-1", "saved", ago(time.Hour))
	noticed.StopReason = ReasonReclaimedForOnline
	onRequests := mk("old-worker-0", "old", ago(time.Hour))
	onRequests.Batch = Resources{}
	onRequests.Requests = colocation.Resources{MilliCPU: 2000, Memory: 4 << 30}
	pods := []*clusterview.Pod{
		mk("saved-worker-0", "saved", ago(time.Hour)), noticed,
		mk("silent-worker-0", "silent", ago(2*time.Hour)),
		mk("restarted-worker-0", "restarted", ago(10*time.Minute)),
		mk("staggered-worker-1", "staggered", ago(30*time.Minute)), // listed before the older one
		mk("staggered-worker-0", "staggered", ago(2*time.Hour)),
		onRequests,
	}
	checkpoints := map[string]time.Time{
		"ml/saved":     ago(5 * time.Minute),
		"ml/restarted": ago(30 * time.Minute), // older than its pods' start: they resumed after it
	}
	s := nodesOf([]*clusterview.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n"}}}, pods, checkpoints)
	n := s.nodes[0]
	since := map[string]time.Time{}
	disrupted := map[string]bool{}
	for _, p := range n.Pods {
		since[p.Name] = p.Job.Since
		disrupted[p.Job.Name] = p.Job.Disrupted
		if p.Name == "saved-worker-1" && !p.Terminating {
			t.Error("a pod under a stop notice for online pods is not counted as released")
		}
	}
	for name, want := range map[string]time.Time{
		"saved-worker-0":     ago(5 * time.Minute),  // its last checkpoint
		"silent-worker-0":    ago(2 * time.Hour),    // no checkpoint: since it started
		"restarted-worker-0": ago(10 * time.Minute), // restarted after its checkpoint
		"staggered-worker-0": ago(30 * time.Minute), // the latest start of its pods
	} {
		if !since[name].Equal(want) {
			t.Errorf("%s: work at risk since %v, want %v", name, since[name], want)
		}
	}
	// Evicting another pod of a job with one under notice loses nothing more.
	if diff := cmp.Diff(map[string]bool{"saved": true, "silent": false, "restarted": false, "staggered": false}, disrupted); diff != "" {
		t.Errorf("jobs disrupted (-want +got):\n%s", diff)
	}
	if n.OnRequests != (Resources{MilliCPU: 2000, Memory: 4 << 30}) {
		t.Errorf("offline on requests %v, want the pod on cpu and memory requests", n.OnRequests)
	}
	if len(n.Pods) != 6 {
		t.Errorf("%d pods on reclaimed capacity, want 6", len(n.Pods))
	}
}
