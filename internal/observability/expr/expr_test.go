package expr

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
)

// fragments are every fragment, by name.
var fragments = map[string]string{
	"OfflinePods":              OfflinePods(),
	"NodesWithOfflineWork":     NodesWithOfflineWork(),
	"GPUUtilByGPU":             GPUUtilByGPU(),
	"OfflineGPUUtilByGPU":      OfflineGPUUtilByGPU(),
	"OfflineCPUUsedByNode":     OfflineCPUUsedByNode(),
	"OnlineCPUUsedByNode":      OnlineCPUUsedByNode(),
	"OfflineMemoryUsedByNode":  OfflineMemoryUsedByNode(),
	"OnlineMemoryUsedByNode":   OnlineMemoryUsedByNode(),
	"MemoryUsedByNode":         MemoryUsedByNode(),
	"CPUUsedByNodeOver":        strings.ReplaceAll(CPUUsedByNodeOver("$__rate_interval"), "$__rate_interval", "1m"),
	"OfflineCPUUsedByNodeOver": strings.ReplaceAll(OfflineCPUUsedByNodeOver("$__rate_interval"), "$__rate_interval", "1m"),
	"OnlineCPUUsedByNodeOver":  strings.ReplaceAll(OnlineCPUUsedByNodeOver("$__rate_interval"), "$__rate_interval", "1m"),
}

func TestFragmentsParse(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	for name, e := range fragments {
		if _, err := p.ParseExpr(e); err != nil {
			t.Errorf("%s does not parse: %v\n%s", name, err, e)
		}
	}
}

// The series below are a node-0 with an online pod shop/web-0 (two
// containers, 0.5 + 0.25 cores, 300 + 100 MB) and an offline pod
// team-a/mnist-worker-0 (2 cores, 4 GB) whose GPU is 40% busy, as the
// kubelet, dcgm-exporter and the manager publish them. The kubelet's
// pod-level series (container="") must not count twice.
const cluster = `
load 15s
  container_cpu_usage_seconds_total{namespace="shop",pod="web-0",container="web",node="node-0"} 0+7.5x40
  container_cpu_usage_seconds_total{namespace="shop",pod="web-0",container="proxy",node="node-0"} 0+3.75x40
  container_cpu_usage_seconds_total{namespace="shop",pod="web-0",container="",node="node-0"} 0+11.25x40
  container_cpu_usage_seconds_total{namespace="team-a",pod="mnist-worker-0",container="tensorflow",node="node-0"} 0+30x40
  container_memory_working_set_bytes{namespace="shop",pod="web-0",container="web",node="node-0"} 300000000x40
  container_memory_working_set_bytes{namespace="shop",pod="web-0",container="proxy",node="node-0"} 100000000x40
  container_memory_working_set_bytes{namespace="shop",pod="web-0",container="",node="node-0"} 400000000x40
  container_memory_working_set_bytes{namespace="team-a",pod="mnist-worker-0",container="tensorflow",node="node-0"} 4000000000x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="node-0",tfjob="mnist",replica_type="worker",instance="a"} 1x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="node-0",tfjob="mnist",replica_type="worker",instance="b"} 1x40
`

func TestUsageByTier(t *testing.T) {
	promqltest.RunTest(t, cluster+`
eval instant at 5m `+OfflineCPUUsedByNode()+`
  {node="node-0"} 2

eval instant at 5m `+OnlineCPUUsedByNode()+`
  {node="node-0"} 0.75

eval instant at 5m `+OfflineMemoryUsedByNode()+`
  {node="node-0"} 4000000000

eval instant at 5m `+OnlineMemoryUsedByNode()+`
  {node="node-0"} 400000000

eval instant at 5m `+NodesWithOfflineWork()+`
  {node="node-0"} 1

# Every pod together: online plus offline above, and the pod-level series
# still counted once.
eval instant at 5m `+CPUUsedByNodeOver("1m")+`
  {node="node-0"} 2.75

eval instant at 5m `+MemoryUsedByNode()+`
  {node="node-0"} 4400000000
`, promqltest.NewTestEngine(t, false, 0, 10000))
}

// A GPU of mnist-worker-0 at 40%, a second at 60%, and a free GPU, as
// dcgm-exporter publishes them scraped with honorLabels false (exported_*)
// or true.
func TestGPUUtilByGPU(t *testing.T) {
	exported := `
load 15s
  DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",exported_namespace="team-a",exported_pod="mnist-worker-0",exported_container="tf",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 40x40
  DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",exported_namespace="team-a",exported_pod="mnist-worker-0",exported_container="tf",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 60x40
  DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-c",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 0x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 1x40
`
	honoured := `
load 15s
  DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",namespace="team-a",pod="mnist-worker-0",container="tf"} 40x40
  DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",namespace="team-a",pod="mnist-worker-0",container="tf"} 60x40
  DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-c"} 0x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 1x40
`
	for name, load := range map[string]string{"exported_pod": exported, "pod": honoured} {
		t.Run(name, func(t *testing.T) {
			promqltest.RunTest(t, load+`
eval instant at 1m `+GPUUtilByGPU()+` and on (namespace, pod) `+OfflinePods()+`
  {namespace="team-a",pod="mnist-worker-0",gpu="0",UUID="GPU-a"} 40
  {namespace="team-a",pod="mnist-worker-0",gpu="1",UUID="GPU-b"} 60

eval instant at 1m `+OfflineGPUUtilByGPU()+`
  {namespace="team-a",pod="mnist-worker-0",gpu="0",UUID="GPU-a",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 40
  {namespace="team-a",pod="mnist-worker-0",gpu="1",UUID="GPU-b",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 60
`, promqltest.NewTestEngine(t, false, 0, 10000))
		})
	}
}
