package dashboards

import (
	"testing"

	"github.com/prometheus/prometheus/promql/promqltest"
)

// reclaimCluster is node-0, whose manager publishes 3 cores and 2 GB of
// reclaimed capacity, 1 core and 1 GB of it held by an offline pod, and
// node-1, which has no batch or frozen series (a manager older than
// reclaimed capacity, or --reclaim=false), as Prometheus stores them. An
// online pod uses 1 core and 1 GB on node-0, the offline pod 2 cores and
// 3 GB; each node can allocate 8 cores and 16 GB. Two evictions a minute
// for CPU, none refused.
const reclaimCluster = `
load 15s
  backfill_node_allocatable{node="node-0",resource="cpu"} 8x40
  backfill_node_allocatable{node="node-1",resource="cpu"} 8x40
  backfill_node_allocatable{node="node-0",resource="memory"} 16000000000x40
  backfill_node_allocatable{node="node-1",resource="memory"} 16000000000x40
  backfill_node_batch_allocatable{node="node-0",resource="cpu"} 3x40
  backfill_node_batch_allocatable{node="node-0",resource="memory"} 2000000000x40
  backfill_node_batch_allocated{node="node-0",resource="cpu"} 1x40
  backfill_node_batch_allocated{node="node-0",resource="memory"} 1000000000x40
  backfill_reclaim_node_frozen{node="node-0"} 1x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="node-0",tfjob="mnist",replica_type="worker"} 1x40
  container_cpu_usage_seconds_total{namespace="shop",pod="web-0",container="web",node="node-0"} 0+15x40
  container_cpu_usage_seconds_total{namespace="team-a",pod="mnist-worker-0",container="tensorflow",node="node-0"} 0+30x40
  container_memory_working_set_bytes{namespace="shop",pod="web-0",container="web",node="node-0"} 1000000000x40
  container_memory_working_set_bytes{namespace="team-a",pod="mnist-worker-0",container="tensorflow",node="node-0"} 3000000000x40
  backfill_reclaim_evictions_total{resource="cpu",result="evicted"} 0+0.5x40
  backfill_reclaim_evictions_total{resource="cpu",result="refused"} 0x40
  backfill_reclaim_evictions_total{resource="memory",result="evicted"} 0x40
  backfill_reclaim_evictions_total{resource="memory",result="refused"} 0x40
`

// asRun substitutes $__rate_interval as Grafana would at a 15s scrape.
func asRun(query string) string {
	return Substitute(query, map[string]string{"__rate_interval": "1m"})
}

func column(t *testing.T, name string) string {
	t.Helper()
	for _, c := range WatermarkColumns() {
		if c.Name == name {
			return asRun(c.Expr)
		}
	}
	t.Fatalf("no watermark column %q", name)
	return ""
}

func figure(t *testing.T, title string) string {
	t.Helper()
	for _, f := range CockpitFigures() {
		if f.Title == title {
			return asRun(f.Query.Expr)
		}
	}
	t.Fatalf("no cockpit figure %q", title)
	return ""
}

// TestReclaimQueries evaluates the cockpit's reclaimed-capacity queries:
// a node without batch or frozen series reads 0, not nothing; the
// utilisation adds both tiers.
func TestReclaimQueries(t *testing.T) {
	promqltest.RunTest(t, reclaimCluster+`
eval instant at 5m `+column(t, "CPU reclaimable")+`
  {node="node-0"} 3
  {node="node-1"} 0

eval instant at 5m `+column(t, "CPU offline holds")+`
  {node="node-0"} 1
  {node="node-1"} 0

eval instant at 5m `+column(t, "Mem reclaimable")+`
  {node="node-0"} 2000000000
  {node="node-1"} 0

eval instant at 5m `+column(t, "Mem offline holds")+`
  {node="node-0"} 1000000000
  {node="node-1"} 0

eval instant at 5m `+column(t, "Reclaim frozen")+`
  {node="node-0"} 1
  {node="node-1"} 0

# (1 online + 2 offline cores) of 16; (1 + 3 GB) of 32 GB.
eval instant at 5m `+figure(t, "Cluster CPU utilisation")+`
  {} 18.75

eval instant at 5m `+figure(t, "Cluster memory utilisation")+`
  {} 12.5

eval instant at 5m `+asRun(ReclaimEvictions()[0].Expr)+`
  {resource="cpu"} 2
  {resource="memory"} 0

eval instant at 5m `+asRun(ReclaimedMemory()[3].Expr)+`
  {} 1000000000
`, promqltest.NewTestEngine(t, false, 0, 10000))
}
