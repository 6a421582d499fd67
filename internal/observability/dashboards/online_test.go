package dashboards

import (
	"encoding/json"
	"testing"

	"github.com/prometheus/prometheus/promql/promqltest"
)

// onlineCluster is the manager's online series, the node agent's and the
// kubelet's, as Prometheus stores them: shop/web declares 200 ms, its P99
// is 250 ms over all pods, 300 ms on nodes with offline pods, 150 ms on
// the others; shop/api declares 500 ms and served requests only on nodes
// without offline pods (100 ms). node-0 runs offline pods and is held for
// latency; node-1 runs none, and nothing holds it (no series). One hold
// began a minute, nothing given back.
//
// node-0's agent reports its online pod web-0 waiting 0.3 s/s for a CPU;
// node-1 has no agent: the kubelet's CPU pressure of its online pod web-1
// says 0.05 s/s.
const onlineCluster = `
load 15s
  backfill_online_latency_objective_seconds{namespace="shop",workload="web"} 0.2x40
  backfill_online_latency_objective_seconds{namespace="shop",workload="api"} 0.5x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="web",peers="all"} 0.25x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="web",peers="with_offline"} 0.3x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="web",peers="without_offline"} 0.15x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="api",peers="all"} 0.1x40
  backfill_online_latency_p99_seconds{namespace="shop",workload="api",peers="without_offline"} 0.1x40
  backfill_reclaim_node_online_hold{node="node-0",signal="latency"} 1x40
  backfill_reclaim_online_actions_total{action="hold"} 0+0.25x40
  backfill_reclaim_online_actions_total{action="give_back"} 0x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="node-0",tfjob="mnist",replica_type="worker"} 1x40
  backfill_node_agent_online_cpu_wait_seconds_total{node="node-0",namespace="shop",pod="web-0"} 0+4.5x40
  container_pressure_cpu_waiting_seconds_total{node="node-1",namespace="shop",pod="web-1",container="web"} 0+0.75x40
`

// TestOnlineQueries evaluates the online row's queries: P99 and objective
// per workload, the peers apart, the wait split by offline pods beside,
// and 0 held rather than nothing while no node is held.
func TestOnlineQueries(t *testing.T) {
	latency, peers, wait, holds, actions := OnlineLatency(), OnlineLatencyByPeers(), OnlineCPUPressure(), OnlineHolds(), OnlineActions()
	promqltest.RunTest(t, onlineCluster+`
eval instant at 5m `+asRun(latency[0].Expr)+`
  {namespace="shop",workload="web"} 0.25
  {namespace="shop",workload="api"} 0.1

eval instant at 5m `+asRun(latency[1].Expr)+`
  {namespace="shop",workload="web"} 0.2
  {namespace="shop",workload="api"} 0.5

eval instant at 5m `+asRun(peers[0].Expr)+`
  {namespace="shop",workload="web"} 0.3

eval instant at 5m `+asRun(peers[1].Expr)+`
  {namespace="shop",workload="web"} 0.15
  {namespace="shop",workload="api"} 0.1

eval instant at 5m `+asRun(wait[0].Expr)+`
  {node="node-0"} 0.3

eval instant at 5m `+asRun(wait[1].Expr)+`
  {node="node-1"} 0.05

eval instant at 5m `+asRun(holds[0].Expr)+`
  {} 1

eval instant at 5m `+asRun(holds[1].Expr)+`
  {} 0

eval instant at 5m `+asRun(actions[0].Expr)+`
  {} 1

eval instant at 5m `+asRun(actions[1].Expr)+`
  {} 0
`, promqltest.NewTestEngine(t, false, 0, 10000))
}

// TestOnlineRowLast wants the online row below every other panel of the
// cockpit but those of the rows after it (idle online GPUs, GPU loans),
// and each row's panels between it and the next row: an expanded row
// takes every panel under it, up to the next row.
func TestOnlineRowLast(t *testing.T) {
	b, err := Cockpit()
	if err != nil {
		t.Fatal(err)
	}
	out, err := ProvisionedJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	var model struct {
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			GridPos struct{ Y, H int }
		} `json:"panels"`
	}
	if err := json.Unmarshal(out, &model); err != nil {
		t.Fatal(err)
	}
	rowAt := func(title string) int {
		for _, p := range model.Panels {
			if p.Type == "row" && p.Title == title {
				return p.GridPos.Y
			}
		}
		t.Fatalf("the cockpit has no row %q", title)
		return -1
	}
	// The rows in order, each with the ids of its panels; the last row
	// runs to the end of the dashboard.
	rows := []struct {
		title       string
		first, last uint32
	}{
		{OnlineRowTitle, cockpitOnlineRowID, cockpitOnlineActionsID},
		{GPUIdleRowTitle, cockpitGPUIdleRowID, cockpitGPUIdleTrendID},
		{GPULoanRowTitle, cockpitGPULoanRowID, cockpitGPULoanWaitID},
	}
	ys := make([]int, len(rows))
	for i, r := range rows {
		ys[i] = rowAt(r.title)
		if i > 0 && ys[i] <= ys[i-1] {
			t.Fatalf("the cockpit's row %q at %d, want it below %q at %d", r.title, ys[i], rows[i-1].title, ys[i-1])
		}
	}
	for _, p := range model.Panels {
		if p.Type == "row" {
			continue
		}
		in := -1
		for i, r := range rows {
			if p.ID >= int(r.first) && p.ID <= int(r.last) {
				in = i
			}
		}
		switch {
		case in < 0 && p.GridPos.Y+p.GridPos.H > ys[0]:
			t.Errorf("panel %d %q falls into the online row (y %d + %d, row at %d)", p.ID, p.Title, p.GridPos.Y, p.GridPos.H, ys[0])
		case in >= 0 && p.GridPos.Y <= ys[in]:
			t.Errorf("panel %d %q of the row %q sits above it (y %d, row at %d)", p.ID, p.Title, rows[in].title, p.GridPos.Y, ys[in])
		case in >= 0 && in+1 < len(rows) && p.GridPos.Y+p.GridPos.H > ys[in+1]:
			t.Errorf("panel %d %q of the row %q falls into the row %q (y %d + %d, row at %d)", p.ID, p.Title, rows[in].title, rows[in+1].title, p.GridPos.Y, p.GridPos.H, ys[in+1])
		}
	}
}
