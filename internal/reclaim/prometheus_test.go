package reclaim

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
)

// TestPrometheusOnlineMemoryPeakSkipsNewOfflinePods: a training pod's
// kubelet series appears a scrape before the manager's
// backfill_offline_pod_info names it offline. That first sample is not
// online use: the peak over the window would keep it, and memory victims
// are evicted without notice. A new online pod, which has no such series,
// still counts from its first sample. (The query is run on the engine
// directly: promqltest's eval re-runs a query at other times with its
// selectors pinned, which an @ end() inside does not allow.)
func TestPrometheusOnlineMemoryPeakSkipsNewOfflinePods(t *testing.T) {
	storage := promqltest.LoadedStorage(t, `
load 5s
  container_memory_working_set_bytes{node="node-0",namespace="shop",pod="web-0",container="web"} 1048576x60
  container_memory_working_set_bytes{node="node-0",namespace="shop",pod="web-1",container="web"} _x20 2097152x40
  container_memory_working_set_bytes{node="node-0",namespace="ml",pod="train-worker-0",container="tensorflow"} _x20 6442450944x40
  backfill_offline_pod_info{node="node-0",namespace="ml",pod="train-worker-0",tfjob="train",replica_type="worker"} _x21 1x39
`)
	engine := promqltest.NewTestEngine(t, false, 0, 100000)
	s := &PrometheusSource{window: 2 * time.Minute, lasting: 15 * time.Second, rateWindow: 20 * time.Second}
	q := s.Queries()[queryOnlineMemory]
	// At 3m the window reaches back past the pods' start at 100s.
	query, err := engine.NewInstantQuery(context.Background(), storage, nil, q, time.Unix(180, 0))
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer query.Close()
	res := query.Exec(context.Background())
	if res.Err != nil {
		t.Fatalf("%s: %v", q, res.Err)
	}
	vec, ok := res.Value.(promql.Vector)
	if !ok || len(vec) != 1 || vec[0].Metric.Get("node") != "node-0" {
		t.Fatalf("%s = %v, want one sample for node-0", q, res.Value)
	}
	if want := float64(3 << 20); vec[0].F != want {
		t.Errorf("online memory peak of node-0 = %.0f bytes, want %.0f (web-0's 1Mi and web-1's 2Mi, not train-worker-0's 6Gi)\n%s", vec[0].F, want, q)
	}
}
