package gpuloan

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/metrics/metricstest"
)

// An online pod that fits two pools where training holds GPUs waits in
// both (each must give it back), but is one missed return and one wait.
func TestWaitsCountAPodOnce(t *testing.T) {
	metrics.Register()
	nodes := []*clusterview.Node{gpuNode("w-0", "WaitA", 4), gpuNode("w-1", "WaitB", 4)}
	pods := []*clusterview.Pod{
		gpuPod("train-a", "w-0", colocation.TierOffline, "train-a", 4, t0),
		gpuPod("train-b", "w-1", colocation.TierOffline, "train-b", 4, t0),
	}
	cl := clusterOf(nodes, pods, nil)
	c := &Controller{missed: map[types.UID]bool{}, log: logr.Discard(), lastSync: t0}
	waiting := []waitingPod{{uid: "infer-0", name: "ns/infer-0", gpus: 2, since: t0.Add(-time.Minute)}}
	byPool := c.waits(waiting, cl, t0.Add(30*time.Second))
	if byPool["WaitA"] != 2 || byPool["WaitB"] != 2 {
		t.Errorf("GPUs waited for by pool %v, want 2 in each", byPool)
	}
	var missed, waited float64
	for _, pool := range []string{"WaitA", "WaitB"} {
		missed += metricstest.Sample(t, metrics.NameGPULoanMissedReturns, map[string]string{"pool": pool}).GetCounter().GetValue()
		waited += metricstest.Sample(t, metrics.NameGPULoanOnlineWait, map[string]string{"pool": pool}).GetCounter().GetValue()
	}
	if missed != 1 || waited != 30 {
		t.Errorf("missed returns %v, seconds waited %v over both pools; want 1 and 30", missed, waited)
	}
}
