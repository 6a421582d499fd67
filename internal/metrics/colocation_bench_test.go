package metrics

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	cvt "github.com/backfill-dev/backfill/internal/clusterview/clusterviewtest"
)

// BenchmarkColocationGather gathers the co-location state of 5,000 nodes,
// two online pods and one training pod on each.
func BenchmarkColocationGather(b *testing.B) {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := range 5000 {
		name := fmt.Sprintf("node-%04d", i)
		nodes = append(nodes, testNode(name, cvt.Resources("cpu", "95", "memory", "381Gi")))
		for j := range 2 {
			pods = append(pods, cvt.Pod("online", fmt.Sprintf("web-%d-%d", i, j), name, corev1.PodQOSBurstable, corev1.PodRunning,
				cvt.Container(cvt.Resources("cpu", "8", "memory", "16Gi"), cvt.Resources("cpu", "16", "memory", "32Gi"))))
		}
		batch := cvt.Resources("backfill.dev/batch-cpu", "2000", "backfill.dev/batch-memory", "4Gi")
		pods = append(pods, cvt.TFJobPod(cvt.Pod("ml", fmt.Sprintf("train-%d-worker-0", i), name, corev1.PodQOSBestEffort, corev1.PodRunning,
			cvt.Container(batch, batch)), fmt.Sprintf("train-%d", i), "worker"))
	}
	c := newColocationCollector()
	c.use(summarised(b, nodes, pods))
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, mf := range mfs {
			n += len(mf.GetMetric())
		}
		b.ReportMetric(float64(n), "series")
	}
}
