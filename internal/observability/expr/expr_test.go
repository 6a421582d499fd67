package expr

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/backfill-dev/backfill/internal/metrics"
)

// fragments are every fragment, by name.
var fragments = map[string]string{
	"OfflinePods":               OfflinePods(),
	"NodesWithOfflineWork":      NodesWithOfflineWork(),
	"GPUUtilByGPU":              GPUUtilByGPU(),
	"OfflineGPUUtilByGPU":       OfflineGPUUtilByGPU(),
	"GPUMemoryUsedByGPU":        GPUMemoryUsedByGPU(),
	"GPUMemoryFullByGPU":        GPUMemoryFullByGPU(),
	"OfflineGPUMemoryUsedByGPU": OfflineGPUMemoryUsedByGPU(),
	"OfflineGPUMemoryFullByGPU": OfflineGPUMemoryFullByGPU(),
	"GoodputByCause":            GoodputByCause(""),
	"GoodputByCause productive": GoodputByCause(`cause="productive"`),
	"OfflineCPUUsedByNode":      OfflineCPUUsedByNode(),
	"OnlineCPUUsedByNode":       OnlineCPUUsedByNode(),
	"OfflineMemoryUsedByNode":   OfflineMemoryUsedByNode(),
	"OnlineMemoryUsedByNode":    OnlineMemoryUsedByNode(),
	"MemoryUsedByNode":          MemoryUsedByNode(),
	"CPUUsedByNodeOver":         strings.ReplaceAll(CPUUsedByNodeOver("$__rate_interval"), "$__rate_interval", "1m"),
	"OfflineCPUUsedByNodeOver":  strings.ReplaceAll(OfflineCPUUsedByNodeOver("$__rate_interval"), "$__rate_interval", "1m"),
	"OnlineCPUUsedByNodeOver":   strings.ReplaceAll(OnlineCPUUsedByNodeOver("$__rate_interval"), "$__rate_interval", "1m"),
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

// GPU 0 of mnist-worker-0 with 72 of 80 GiB in use (90%), GPU 1 nearly
// full (79 GiB, 98.75%), and a free GPU, as dcgm-exporter publishes them
// in MiB scraped with honorLabels false (exported_*) or true.
func TestGPUMemoryByGPU(t *testing.T) {
	exported := `
load 15s
  DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",exported_namespace="team-a",exported_pod="mnist-worker-0",exported_container="tf",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 73728x40
  DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a",exported_namespace="team-a",exported_pod="mnist-worker-0",exported_container="tf",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 8192x40
  DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",exported_namespace="team-a",exported_pod="mnist-worker-0",exported_container="tf",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 80896x40
  DCGM_FI_DEV_FB_FREE{gpu="1",UUID="GPU-b",exported_namespace="team-a",exported_pod="mnist-worker-0",exported_container="tf",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 1024x40
  DCGM_FI_DEV_FB_USED{gpu="2",UUID="GPU-c",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 0x40
  DCGM_FI_DEV_FB_FREE{gpu="2",UUID="GPU-c",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 81920x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 1x40
`
	honoured := `
load 15s
  DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",namespace="team-a",pod="mnist-worker-0",container="tf"} 73728x40
  DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a",namespace="team-a",pod="mnist-worker-0",container="tf"} 8192x40
  DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",namespace="team-a",pod="mnist-worker-0",container="tf"} 80896x40
  DCGM_FI_DEV_FB_FREE{gpu="1",UUID="GPU-b",namespace="team-a",pod="mnist-worker-0",container="tf"} 1024x40
  DCGM_FI_DEV_FB_USED{gpu="2",UUID="GPU-c"} 0x40
  DCGM_FI_DEV_FB_FREE{gpu="2",UUID="GPU-c"} 81920x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 1x40
`
	for name, load := range map[string]string{"exported_pod": exported, "pod": honoured} {
		t.Run(name, func(t *testing.T) {
			promqltest.RunTest(t, load+`
eval instant at 1m `+OfflineGPUMemoryUsedByGPU()+`
  {namespace="team-a",pod="mnist-worker-0",gpu="0",UUID="GPU-a",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 73728
  {namespace="team-a",pod="mnist-worker-0",gpu="1",UUID="GPU-b",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 80896

eval instant at 1m `+OfflineGPUMemoryFullByGPU()+`
  {namespace="team-a",pod="mnist-worker-0",gpu="0",UUID="GPU-a",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 0.9
  {namespace="team-a",pod="mnist-worker-0",gpu="1",UUID="GPU-b",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 0.9875
`, promqltest.NewTestEngine(t, false, 0, 10000))
		})
	}
}

// Two manager replicas scraped during a leader change publish the same
// job's account; the fragment keeps one series per job and cause.
func TestGoodputByCause(t *testing.T) {
	promqltest.RunTest(t, `
load 15s
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="productive",instance="a"} 0+15x40
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="productive",instance="b"} 0+15x40
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="waiting",instance="a"} 600x40

eval instant at 5m `+GoodputByCause(`cause="productive"`)+`
  {namespace="team-a",tfjob="mnist",cause="productive"} 300

eval instant at 5m `+GoodputByCause("")+`
  {namespace="team-a",tfjob="mnist",cause="productive"} 300
  {namespace="team-a",tfjob="mnist",cause="waiting"} 600
`, promqltest.NewTestEngine(t, false, 0, 10000))
}

// TestMetricNames keeps the names the fragments read in step with the
// manager's.
func TestMetricNames(t *testing.T) {
	for got, want := range map[string]string{MetricOfflinePodInfo: metrics.NameOfflinePodInfo, MetricGoodput: metrics.NameJobGoodput} {
		if got != want {
			t.Errorf("fragments read %s, the manager exports %s", got, want)
		}
	}
}
