package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/backfill-dev/backfill/internal/clusterview"
	cvt "github.com/backfill-dev/backfill/internal/clusterview/clusterviewtest"
	"github.com/backfill-dev/backfill/internal/colocation"
)

func testNode(name string, allocatable corev1.ResourceList) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: allocatable}}
}

func TestColocationState(t *testing.T) {
	web := cvt.Pod("shop", "web-0", "gpu-0", corev1.PodQOSBurstable, corev1.PodRunning,
		cvt.Container(cvt.Resources("cpu", "500m", "memory", "1Gi"), cvt.Resources("cpu", "1", "memory", "2Gi")),
		cvt.Container(cvt.Resources("cpu", "250m"), nil))
	// An init container larger than the containers' sum sets the request.
	web.Spec.InitContainers = []corev1.Container{cvt.Container(cvt.Resources("cpu", "2"), nil)}
	web.Spec.Overhead = cvt.Resources("cpu", "100m")
	web.Annotations = map[string]string{colocation.LatencyObjectiveAnnotation: "250ms"}
	web.Labels = map[string]string{"pod-template-hash": "5f7b"}
	web.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-5f7b", Controller: ptr.To(true)}}
	worker := cvt.TFJobPod(cvt.Pod("team-a", "mnist-worker-0", "gpu-0", corev1.PodQOSGuaranteed, corev1.PodRunning,
		cvt.Container(cvt.Resources("cpu", "4", "memory", "8Gi", "nvidia.com/gpu", "2"), cvt.Resources("cpu", "4", "memory", "8Gi", "nvidia.com/gpu", "2"))),
		"mnist", "worker")
	labelled := cvt.Pod("batch", "etl-0", "cpu-0", corev1.PodQOSBestEffort, corev1.PodPending, cvt.Container(nil, nil))
	labelled.Labels = map[string]string{colocation.TierLabel: "offline"}
	classed := cvt.Pod("batch", "report-0", "cpu-0", corev1.PodQOSBurstable, corev1.PodRunning, cvt.Container(cvt.Resources("cpu", "1"), nil))
	classed.Spec.PriorityClassName = "backfill-offline"
	unbound := cvt.Pod("shop", "web-1", "", corev1.PodQOSBurstable, corev1.PodPending, cvt.Container(cvt.Resources("cpu", "1"), nil))
	lost := cvt.Pod("shop", "web-2", "gone-0", corev1.PodQOSBestEffort, corev1.PodRunning, cvt.Container(nil, nil))
	batch := cvt.Resources("backfill.dev/batch-cpu", "3000", "backfill.dev/batch-memory", "6Gi")
	reclaimed := cvt.TFJobPod(cvt.Pod("team-a", "etl-worker-0", "cpu-0", corev1.PodQOSBestEffort, corev1.PodRunning, cvt.Container(batch, batch)), "etl", "worker")
	leaving := cvt.TFJobPod(cvt.Pod("team-a", "etl-worker-1", "cpu-0", corev1.PodQOSBestEffort, corev1.PodRunning, cvt.Container(batch, batch)), "etl", "worker")
	leaving.DeletionTimestamp = &metav1.Time{}
	cpuNode := testNode("cpu-0", cvt.Resources("cpu", "16", "memory", "64Gi"))
	cpuNode.Status.Capacity = cvt.Resources("cpu", "16", "memory", "64Gi", "backfill.dev/batch-cpu", "9500", "backfill.dev/batch-memory", "40Gi")

	// The apiserver leaves finished pods out (the view's field selector);
	// an unbound pod that slips through counts nowhere.
	source := summarised(t,
		[]*corev1.Node{
			testNode("gpu-0", cvt.Resources("cpu", "32", "memory", "128Gi", "nvidia.com/gpu", "8")),
			cpuNode,
		},
		[]*corev1.Pod{web, worker, labelled, classed, unbound, lost, reclaimed, leaving})
	want := map[string]float64{}
	zero := func(node string) {
		for _, r := range Resources {
			want["backfill_node_allocatable{node="+node+",resource="+r.Label+"}"] = 0
			for _, tier := range colocation.Tiers {
				want["backfill_node_requests{node="+node+",resource="+r.Label+",tier="+string(tier)+"}"] = 0
				want["backfill_node_limits{node="+node+",resource="+r.Label+",tier="+string(tier)+"}"] = 0
			}
		}
		for _, tier := range colocation.Tiers {
			for _, qos := range QOSClasses {
				want["backfill_node_pods{node="+node+",qos_class="+string(qos)+",tier="+string(tier)+"}"] = 0
			}
		}
		for _, r := range BatchResources {
			want["backfill_node_batch_allocatable{node="+node+",resource="+r+"}"] = 0
			want["backfill_node_batch_allocated{node="+node+",resource="+r+"}"] = 0
		}
	}
	zero("gpu-0")
	zero("cpu-0")
	zero("gone-0")
	for k, v := range map[string]float64{
		"backfill_node_allocatable{node=gpu-0,resource=cpu}":                                                        32,
		"backfill_node_allocatable{node=gpu-0,resource=memory}":                                                     128 << 30,
		"backfill_node_allocatable{node=gpu-0,resource=nvidia_com_gpu}":                                             8,
		"backfill_node_allocatable{node=cpu-0,resource=cpu}":                                                        16,
		"backfill_node_allocatable{node=cpu-0,resource=memory}":                                                     64 << 30,
		"backfill_node_requests{node=gpu-0,resource=cpu,tier=online}":                                               2.1, // max(0.75, 2) + 0.1
		"backfill_node_requests{node=gpu-0,resource=memory,tier=online}":                                            1 << 30,
		"backfill_node_limits{node=gpu-0,resource=cpu,tier=online}":                                                 1.1, // the limit set, plus overhead
		"backfill_node_limits{node=gpu-0,resource=memory,tier=online}":                                              2 << 30,
		"backfill_node_requests{node=gpu-0,resource=cpu,tier=offline}":                                              4,
		"backfill_node_requests{node=gpu-0,resource=memory,tier=offline}":                                           8 << 30,
		"backfill_node_requests{node=gpu-0,resource=nvidia_com_gpu,tier=offline}":                                   2,
		"backfill_node_limits{node=gpu-0,resource=cpu,tier=offline}":                                                4,
		"backfill_node_limits{node=gpu-0,resource=memory,tier=offline}":                                             8 << 30,
		"backfill_node_limits{node=gpu-0,resource=nvidia_com_gpu,tier=offline}":                                     2,
		"backfill_node_pods{node=gpu-0,qos_class=Burstable,tier=online}":                                            1,
		"backfill_node_pods{node=gpu-0,qos_class=Guaranteed,tier=offline}":                                          1,
		"backfill_node_requests{node=cpu-0,resource=cpu,tier=offline}":                                              1,
		"backfill_node_pods{node=cpu-0,qos_class=BestEffort,tier=offline}":                                          3,
		"backfill_node_batch_allocatable{node=cpu-0,resource=cpu}":                                                  9.5,
		"backfill_node_batch_allocatable{node=cpu-0,resource=memory}":                                               40 << 30,
		"backfill_node_batch_allocated{node=cpu-0,resource=cpu}":                                                    3, // the terminating pod's is released
		"backfill_node_batch_allocated{node=cpu-0,resource=memory}":                                                 6 << 30,
		"backfill_offline_pod_info{namespace=team-a,node=cpu-0,pod=etl-worker-0,replica_type=worker,tfjob=etl}":     1,
		"backfill_offline_pod_info{namespace=team-a,node=cpu-0,pod=etl-worker-1,replica_type=worker,tfjob=etl}":     1,
		"backfill_node_pods{node=cpu-0,qos_class=Burstable,tier=offline}":                                           1,
		"backfill_node_pods{node=gone-0,qos_class=BestEffort,tier=online}":                                          1,
		"backfill_offline_pod_info{namespace=team-a,node=gpu-0,pod=mnist-worker-0,replica_type=worker,tfjob=mnist}": 1,
		"backfill_offline_pod_info{namespace=batch,node=cpu-0,pod=etl-0,replica_type=,tfjob=}":                      1,
		"backfill_offline_pod_info{namespace=batch,node=cpu-0,pod=report-0,replica_type=,tfjob=}":                   1,
		// web-0 opts in, beside the mnist worker.
		"backfill_online_pod_info{namespace=shop,node=gpu-0,offline_beside=true,pod=web-0,workload=web}": 1,
		"backfill_online_latency_objective_seconds{namespace=shop,workload=web}":                         0.25,
	} {
		want[k] = v
	}

	cases := map[string]struct {
		source colocationSource
		want   map[string]float64
	}{
		"nodes and pods of every namespace":    {source: source, want: want},
		"no view (not leading, or turned off)": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newColocationCollector()
			if tc.source != nil {
				c.use(tc.source)
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)
			families, err := reg.Gather()
			if err != nil {
				t.Fatalf("Gathering: %v", err)
			}
			if diff := cmp.Diff(tc.want, series(families), cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Series (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeSource is a synced view holding summaries.
type fakeSource struct {
	nodes []*clusterview.Node
	pods  []*clusterview.Pod
}

func (f fakeSource) Synced() bool               { return true }
func (f fakeSource) Nodes() []*clusterview.Node { return f.nodes }
func (f fakeSource) Pods() []*clusterview.Pod   { return f.pods }

// summarised summarises nodes and pods as the cluster view does.
func summarised(t testing.TB, nodes []*corev1.Node, pods []*corev1.Pod) fakeSource {
	t.Helper()
	var f fakeSource
	for _, n := range nodes {
		f.nodes = append(f.nodes, clusterview.NodeSummary(n))
	}
	for _, p := range pods {
		f.pods = append(f.pods, clusterview.PodSummary(p, colocation.DefaultOfflinePriorityClass))
	}
	return f
}
