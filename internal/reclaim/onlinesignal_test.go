package reclaim

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// shop is the histograms of two workloads as Prometheus stores them. web
// declares an objective: web-0 runs beside offline pods on node-0, all its
// requests between 200 and 300 ms; web-1 on node-1, none beside, all
// under 100 ms; ten requests each per 15 s. api-0 exposes the same
// histogram, all slow, but declares nothing and has no info series. The
// manager's info series overlap on web-0 at a leader change.
const shop = `
load 15s
  http_server_request_duration_seconds_bucket{namespace="shop",pod="web-0",le="0.1"} 0x40
  http_server_request_duration_seconds_bucket{namespace="shop",pod="web-0",le="0.2"} 0x40
  http_server_request_duration_seconds_bucket{namespace="shop",pod="web-0",le="0.3"} 0+10x40
  http_server_request_duration_seconds_bucket{namespace="shop",pod="web-0",le="+Inf"} 0+10x40
  http_server_request_duration_seconds_bucket{namespace="shop",pod="web-1",le="0.1"} 0+10x40
  http_server_request_duration_seconds_bucket{namespace="shop",pod="web-1",le="0.2"} 0+10x40
  http_server_request_duration_seconds_bucket{namespace="shop",pod="web-1",le="0.3"} 0+10x40
  http_server_request_duration_seconds_bucket{namespace="shop",pod="web-1",le="+Inf"} 0+10x40
  http_server_request_duration_seconds_bucket{namespace="shop",pod="api-0",le="0.3"} 0x40
  http_server_request_duration_seconds_bucket{namespace="shop",pod="api-0",le="+Inf"} 0+10x40
  backfill_online_pod_info{namespace="shop",pod="web-0",node="node-0",workload="web",offline_beside="true",instance="a"} 1x40
  backfill_online_pod_info{namespace="shop",pod="web-0",node="node-0",workload="web",offline_beside="true",instance="b"} 1x40
  backfill_online_pod_info{namespace="shop",pod="web-1",node="node-1",workload="web",offline_beside="false",instance="a"} 1x40
  backfill_node_agent_online_cpu_wait_seconds_total{node="node-0",namespace="shop",pod="web-0"} 0+3x40
  container_pressure_cpu_waiting_seconds_total{node="node-1",namespace="shop",pod="web-1",container="web"} 0+1.5x40
  container_pressure_cpu_waiting_seconds_total{node="node-1",namespace="ml",pod="train-0",container="tf"} 0+15x40
  backfill_offline_pod_info{namespace="ml",pod="train-0",node="node-1",tfjob="train",replica_type="worker"} 1x40
`

func TestOnlineSignalQueries(t *testing.T) {
	metrics := []string{"http_server_request_duration_seconds", "http_request_duration_seconds"}
	for _, kind := range []string{colocation.HistogramAuto, colocation.HistogramClassic} {
		t.Run(kind, func(t *testing.T) {
			// web-0: 0.2 + 0.99 x 0.1; web-1: 0.99 x 0.1; together the
			// 19.8th of 20 requests, in the bucket of web-0's ten.
			promqltest.RunTest(t, shop+`
eval instant at 5m `+P99Query(metrics, kind, time.Minute, "namespace", "workload", "node")+`
  {namespace="shop",workload="web",node="node-0"} 0.299
  {namespace="shop",workload="web",node="node-1"} 0.099

eval instant at 5m `+P99Query(metrics, kind, time.Minute, "namespace", "workload", "offline_beside")+`
  {namespace="shop",workload="web",offline_beside="true"} 0.299
  {namespace="shop",workload="web",offline_beside="false"} 0.099

eval instant at 5m `+P99Query(metrics, kind, time.Minute, "namespace", "workload")+`
  {namespace="shop",workload="web"} 0.298
`, promqltest.NewTestEngine(t, false, 0, 10000))
		})
	}
	// The agent measures node-0; node-1 has no agent, and its offline pod's
	// own wait is not online pods'.
	promqltest.RunTest(t, shop+`
eval instant at 5m `+CPUWaitQuery(time.Minute)+`
  {node="node-0"} 0.2
  {node="node-1"} 0.1
`, promqltest.NewTestEngine(t, false, 0, 10000))
}

// A native histogram gives the same P99 through the join as read alone.
func TestOnlineSignalNativeHistogram(t *testing.T) {
	const load = `
load 15s
  rpc_duration_seconds{namespace="shop",pod="web-0"} {{schema:3 sum:0 count:0 buckets:[0]}}+{{schema:3 sum:2 count:10 offset:-20 buckets:[2 3 5]}}x40
  backfill_online_pod_info{namespace="shop",pod="web-0",node="node-0",workload="web",offline_beside="true"} 1x40
`
	storage := promqltest.LoadedStorage(t, load)
	engine := promqltest.NewTestEngine(t, false, 0, 10000)
	at := time.Unix(0, 0).Add(5 * time.Minute)
	value := func(q string) float64 {
		t.Helper()
		qry, err := engine.NewInstantQuery(context.Background(), storage, nil, q, at)
		if err != nil {
			t.Fatal(err)
		}
		res := qry.Exec(context.Background())
		vec, err := res.Vector()
		if err != nil || len(vec) != 1 {
			t.Fatalf("%s: %v, %v", q, vec, err)
		}
		return vec[0].F
	}
	for _, kind := range []string{colocation.HistogramAuto, colocation.HistogramNative} {
		got := value(P99Query([]string{"rpc_duration_seconds"}, kind, time.Minute, "namespace", "workload", "node"))
		want := value(`histogram_quantile(0.99, rate(rpc_duration_seconds[1m]))`)
		if got != want || got == 0 {
			t.Errorf("%s: P99 through the join = %v, want %v", kind, got, want)
		}
	}
}
