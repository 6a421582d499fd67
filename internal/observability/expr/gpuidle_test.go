package expr_test

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// gpuCluster is a day and an hour of dcgm-exporter's utilisation, a
// sample every 5 minutes, on a node whose exporter is scraped without
// honorLabels (the pods' labels as exported_*) but for llm/infer-0's,
// scraped with them:
//
//   - GPU-0: online shop/web-7d4b9c8f6-x2x45 at 3% all day: idle 24 h;
//   - GPU-1: online shop/web-7d4b9c8f6-b2c4d at 50% until 13h05, then 2%:
//     idle from then, 12 h of the day;
//   - GPU-2: online llm/infer-0 at 80%: never idle;
//   - GPU-3: free, at 0%, its pod label the exporter's: no online pod's;
//   - GPU-4: offline team-a/mnist-worker-0 at 0%: not online;
//   - GPU-5: offline team-a/old-worker-0 at 0% for its first 6 h, then
//     gone with its backfill_offline_pod_info: offline while it ran.
const gpuCluster = `
load 5m
  up{job="dcgm-exporter",instance="10.0.0.9:9400",namespace="gpu-operator",pod="dcgm-exporter-x2x45"} 1x300
  DCGM_FI_DEV_GPU_UTIL{job="dcgm-exporter",instance="10.0.0.9:9400",namespace="gpu-operator",pod="dcgm-exporter-x2x45",gpu="0",UUID="GPU-0",exported_namespace="shop",exported_pod="web-7d4b9c8f6-x2x45"} 3x300
  DCGM_FI_DEV_GPU_UTIL{job="dcgm-exporter",instance="10.0.0.9:9400",namespace="gpu-operator",pod="dcgm-exporter-x2x45",gpu="1",UUID="GPU-1",exported_namespace="shop",exported_pod="web-7d4b9c8f6-b2c4d"} 50x156 2x143
  DCGM_FI_DEV_GPU_UTIL{job="dcgm-exporter",instance="10.0.0.9:9400",namespace="llm",pod="infer-0",gpu="2",UUID="GPU-2"} 80x300
  DCGM_FI_DEV_GPU_UTIL{job="dcgm-exporter",instance="10.0.0.9:9400",namespace="gpu-operator",pod="dcgm-exporter-x2x45",gpu="3",UUID="GPU-3"} 0x300
  DCGM_FI_DEV_GPU_UTIL{job="dcgm-exporter",instance="10.0.0.9:9400",namespace="gpu-operator",pod="dcgm-exporter-x2x45",gpu="4",UUID="GPU-4",exported_namespace="team-a",exported_pod="mnist-worker-0"} 0x300
  DCGM_FI_DEV_GPU_UTIL{job="dcgm-exporter",instance="10.0.0.9:9400",namespace="gpu-operator",pod="dcgm-exporter-x2x45",gpu="5",UUID="GPU-5",exported_namespace="team-a",exported_pod="old-worker-0"} 0x72
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="gpu-0",tfjob="mnist",replica_type="worker"} 1x300
  backfill_offline_pod_info{namespace="team-a",pod="old-worker-0",node="gpu-0",tfjob="old",replica_type="worker"} 1x72
`

func TestGPUIdleFragments(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	for name, e := range map[string]string{
		"OnlineGPUUtilByGPU":          expr.OnlineGPUUtilByGPU(),
		"OnlineGPUAvgUtilByGPUOver":   expr.OnlineGPUAvgUtilByGPUOver(expr.GPUIdleAvgWindow),
		"OnlineGPUIdleHoursByGPUOver": expr.OnlineGPUIdleHoursByGPUOver(expr.GPUIdleHoursWindow),
		"ByWorkload":                  expr.ByWorkload(expr.OnlineGPUUtilByGPU()),
	} {
		if _, err := p.ParseExpr(e); err != nil {
			t.Errorf("%s does not parse: %v\n%s", name, err, e)
		}
	}

	promqltest.RunTest(t, gpuCluster+`
# The online pods' GPUs now: neither the free one nor the offline pods'.
eval instant at 25h `+expr.OnlineGPUUtilByGPU()+`
  {namespace="shop",pod="web-7d4b9c8f6-x2x45",gpu="0",UUID="GPU-0"} 3
  {namespace="shop",pod="web-7d4b9c8f6-b2c4d",gpu="1",UUID="GPU-1"} 2
  {namespace="llm",pod="infer-0",gpu="2",UUID="GPU-2"} 80

# Hours idle over the day: the ended training pod's first 6 h are
# offline's, though it is gone now.
eval instant at 25h `+expr.OnlineGPUIdleHoursByGPUOver("24h")+`
  {namespace="shop",pod="web-7d4b9c8f6-x2x45",gpu="0",UUID="GPU-0"} 24
  {namespace="shop",pod="web-7d4b9c8f6-b2c4d",gpu="1",UUID="GPU-1"} 12

# Half a day after GPU-1 began to idle at 13h05: 6 h of 12.
eval instant at 19h `+expr.OnlineGPUIdleHoursByGPUOver("12h")+`
  {namespace="shop",pod="web-7d4b9c8f6-x2x45",gpu="0",UUID="GPU-0"} 12
  {namespace="shop",pod="web-7d4b9c8f6-b2c4d",gpu="1",UUID="GPU-1"} 6

eval instant at 25h `+expr.OnlineGPUAvgUtilByGPUOver("6h")+`
  {namespace="shop",pod="web-7d4b9c8f6-x2x45",gpu="0",UUID="GPU-0"} 3
  {namespace="shop",pod="web-7d4b9c8f6-b2c4d",gpu="1",UUID="GPU-1"} 2
  {namespace="llm",pod="infer-0",gpu="2",UUID="GPU-2"} 80
`, promqltest.NewTestEngine(t, false, 0, 10000))
}

// TestByWorkload names each pod's owner as Kubernetes names its pods.
func TestByWorkload(t *testing.T) {
	promqltest.RunTest(t, `
load 1m
  x{namespace="shop",pod="web-7d4b9c8f6-x2x45"} 1
  x{namespace="shop",pod="web-b2c4d6f78-zz9kq"} 1
  x{namespace="llm",pod="infer-12"} 1
  x{namespace="kube-system",pod="agent-x2x45"} 1
  x{namespace="team",pod="model-server"} 1
  x{namespace="team",pod="gpu-bench"} 1

eval instant at 0 sum by (workload) (`+expr.ByWorkload("x")+`)
  {workload="shop/web"} 2
  {workload="llm/infer"} 1
  {workload="kube-system/agent"} 1
  {workload="team/model-server"} 1
  {workload="team/gpu-bench"} 1
`, promqltest.NewTestEngine(t, false, 0, 10000))
}
