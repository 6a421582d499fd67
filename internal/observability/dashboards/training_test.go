package dashboards

import (
	"testing"

	"github.com/prometheus/prometheus/promql/promqltest"
)

// trainingCluster is two TFJobs as the manager and dcgm-exporter publish
// them: team-a/mnist, 3000 s productive of its 4000 s (500 lost, 200 in
// recovery, 300 waiting), scraped from two manager replicas during a
// leader change; team-b/resnet, 1000 s productive of 4000 s (3000
// waiting); and a job created this instant, with no time yet. mnist's
// worker holds two GPUs, 72 and 79 of 80 GiB in use; a free GPU belongs
// to no pod.
const trainingCluster = `
load 15s
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="productive",instance="a"} 3000x40
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="progress_lost",instance="a"} 500x40
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="recovery",instance="a"} 200x40
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="waiting",instance="a"} 300x40
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="productive",instance="b"} 3000x40
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="progress_lost",instance="b"} 500x40
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="recovery",instance="b"} 200x40
  backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="waiting",instance="b"} 300x40
  backfill_tfjob_goodput_seconds{namespace="team-b",tfjob="resnet",cause="productive"} 1000x40
  backfill_tfjob_goodput_seconds{namespace="team-b",tfjob="resnet",cause="progress_lost"} 0x40
  backfill_tfjob_goodput_seconds{namespace="team-b",tfjob="resnet",cause="recovery"} 0x40
  backfill_tfjob_goodput_seconds{namespace="team-b",tfjob="resnet",cause="waiting"} 3000x40
  backfill_tfjob_goodput_seconds{namespace="team-b",tfjob="new",cause="productive"} 0x40
  backfill_tfjob_goodput_seconds{namespace="team-b",tfjob="new",cause="progress_lost"} 0x40
  backfill_tfjob_goodput_seconds{namespace="team-b",tfjob="new",cause="recovery"} 0x40
  backfill_tfjob_goodput_seconds{namespace="team-b",tfjob="new",cause="waiting"} 0x40
  backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 1x40
  DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",exported_namespace="team-a",exported_pod="mnist-worker-0",namespace="monitoring",pod="dcgm-exporter-x"} 73728x40
  DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a",exported_namespace="team-a",exported_pod="mnist-worker-0",namespace="monitoring",pod="dcgm-exporter-x"} 8192x40
  DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",exported_namespace="team-a",exported_pod="mnist-worker-0",namespace="monitoring",pod="dcgm-exporter-x"} 80896x40
  DCGM_FI_DEV_FB_FREE{gpu="1",UUID="GPU-b",exported_namespace="team-a",exported_pod="mnist-worker-0",namespace="monitoring",pod="dcgm-exporter-x"} 1024x40
  DCGM_FI_DEV_FB_USED{gpu="2",UUID="GPU-c",namespace="monitoring",pod="dcgm-exporter-x"} 0x40
  DCGM_FI_DEV_FB_FREE{gpu="2",UUID="GPU-c",namespace="monitoring",pod="dcgm-exporter-x"} 81920x40
`

// asJob substitutes the variables for one job, as the TFJob dashboard
// would.
func asJob(query, namespace, tfjob string) string {
	return Substitute(query, map[string]string{VarNamespace: namespace, VarTFJob: tfjob})
}

// TestTrainingQueries evaluates the goodput and GPU memory queries: a
// leader change counts nothing twice, the cockpit's goodput weighs jobs
// by their time, a job with no time shows nothing rather than NaN, and
// memory is the pod's GPUs together in bytes, in use of its fullest GPU
// in percent.
func TestTrainingQueries(t *testing.T) {
	promqltest.RunTest(t, trainingCluster+`
eval instant at 5m `+asJob(JobGoodput().Expr, "team-a", "mnist")+`
  {} 75

eval instant at 5m `+asJob(JobGoodput().Expr, "team-b", "resnet")+`
  {} 25

eval instant at 5m `+asJob(JobGoodput().Expr, "team-b", "new")+`

eval instant at 5m `+asJob(JobGoodputByCause().Expr, "team-a", "mnist")+`
  {namespace="team-a",tfjob="mnist",cause="productive"} 3000
  {namespace="team-a",tfjob="mnist",cause="progress_lost"} 500
  {namespace="team-a",tfjob="mnist",cause="recovery"} 200
  {namespace="team-a",tfjob="mnist",cause="waiting"} 300

# (3000 + 1000) of (4000 + 4000 + 0).
eval instant at 5m `+asJob(TrainingGoodput().Expr, AllValue, AllValue)+`
  {} 50

eval instant at 5m `+asJob(TrainingGoodput().Expr, "team-b", AllValue)+`
  {} 25

eval instant at 5m `+asJob(GPUMemoryUsedByTFJobPod().Expr, "team-a", "mnist")+`
  {namespace="team-a",pod="mnist-worker-0",tfjob="mnist",replica_type="worker"} 162135015424

eval instant at 5m `+asJob(GPUMemoryFullByTFJobPod().Expr, "team-a", "mnist")+`
  {namespace="team-a",pod="mnist-worker-0",tfjob="mnist",replica_type="worker"} 98.75

eval instant at 5m `+asJob(GPUMemoryUsedByTFJobPod().Expr, "team-b", "resnet")+`
`, promqltest.NewTestEngine(t, false, 0, 10000))
}
