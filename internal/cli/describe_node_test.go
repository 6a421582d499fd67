package cli

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/queueing"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// reclaimNode is a node of 16 CPU and 64Gi that publishes published, with
// the explanation e.
func reclaimNode(published reclaim.Resources, e *reclaim.Explanation) *corev1.Node {
	batch := corev1.ResourceList{
		colocation.ResourceBatchCPU:    *resource.NewQuantity(published.MilliCPU, resource.DecimalSI),
		colocation.ResourceBatchMemory: *resource.NewQuantity(published.Memory, resource.BinarySI),
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cpu-0"}, Status: corev1.NodeStatus{Capacity: batch, Allocatable: batch}}
	if e != nil {
		data, _ := json.Marshal(e)
		n.Annotations = map[string]string{reclaim.ExplanationAnnotation: string(data)}
	}
	return n
}

func TestDescribeNode(t *testing.T) {
	gi := func(n int64) int64 { return n << 30 }
	evicting := &reclaim.Explanation{
		State: reclaim.StateFresh, At: fixedNow.Add(-20 * time.Second), UsageAt: fixedNow.Add(-35 * time.Second),
		Why:      "evicting 1 offline pod(s): they held cpu 9, memory 18Gi, above the target cpu 4400m, memory 20Gi; no room for new pods until the cool-down ends",
		Capacity: reclaim.Resources{MilliCPU: 16000, Memory: gi(64)}, Margin: reclaim.Resources{MilliCPU: 1600, Memory: gi(64) / 5},
		System: reclaim.Resources{MilliCPU: 150}, OnlinePeak: reclaim.Resources{MilliCPU: 10000, Memory: gi(30)},
		Target: reclaim.Resources{MilliCPU: 4250, Memory: gi(21)}, Held: reclaim.Resources{MilliCPU: 9000, Memory: gi(18)},
		Evicting: reclaim.Resources{MilliCPU: 6000, Memory: gi(12)}, Published: reclaim.Resources{MilliCPU: 3000, Memory: gi(6)},
		CooldownUntil: fixedNow.Add(4 * time.Minute),
	}
	held := *evicting
	held.Why = "evicting 1 offline pod(s) to give back a step of CPU: workload shop/web has P99 240ms, above its objective 200ms; no room for new pods until the cool-down ends"
	held.Online = &reclaim.OnlineHold{Signal: reclaim.SignalLatency, Why: "workload shop/web has P99 240ms, above its objective 200ms",
		Since: fixedNow.Add(-3 * time.Minute), MilliCPU: 7400, Steps: 1}
	stale := &reclaim.Explanation{State: reclaim.StateStale, At: fixedNow.Add(-time.Minute), Why: "frozen: no usage for the node"}
	batch := corev1.ResourceList{colocation.ResourceBatchCPU: resource.MustParse("3000"), colocation.ResourceBatchMemory: resource.MustParse("6Gi")}
	training := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "etl-worker-0", OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: "etl", Controller: ptr.To(true)}}},
		Spec:       corev1.PodSpec{NodeName: "cpu-0", Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{Requests: batch, Limits: batch}}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	web := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0"},
		Spec: corev1.PodSpec{NodeName: "cpu-0", Containers: []corev1.Container{{Name: "web", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("32Gi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	frozen := corev1.Event{Type: "Warning", Reason: "ReclaimFrozen", Message: "frozen: no usage for the node; reclaimed capacity stays at cpu 0, memory 0, nothing grows or is evicted until usage is current",
		LastTimestamp: metav1.NewTime(fixedNow.Add(-time.Minute))}

	for name, d := range map[string]*nodeDescription{
		"describe-node-evicting": {node: reclaimNode(evicting.Published, evicting), pods: []corev1.Pod{training, web}},
		"describe-node-held":     {node: reclaimNode(held.Published, &held), pods: []corev1.Pod{training, web}},
		"describe-node-stale":    {node: reclaimNode(reclaim.Resources{}, stale), pods: []corev1.Pod{web}, events: []corev1.Event{frozen}},
		"describe-node-never":    {node: reclaimNode(reclaim.Resources{}, nil)},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := renderNodeDescription(&out, d, fixedNow); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, out.String())
		})
	}
}

// A GPU node shows its pool and the GPUs training holds there on loan, by
// job: a loan told to return with its deadline, a job Kueue manages left
// out, online pods' GPUs not counted.
func TestDescribeNodeGPULoans(t *testing.T) {
	gpus := func(n string) corev1.ResourceList {
		return corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}
	}
	pod := func(name, job, n string) corev1.Pod {
		p := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name},
			Spec: corev1.PodSpec{NodeName: "gpu-0", PriorityClassName: colocation.DefaultOfflinePriorityClass,
				Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: gpus(n), Limits: gpus(n)}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
		if job != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: job, Controller: ptr.To(true)}}
		} else {
			p.Namespace, p.Spec.PriorityClassName = "shop", ""
		}
		return p
	}
	returning := gpuloan.LoanState{Phase: gpuloan.PhaseReturning, Pool: "NVIDIA-A100-SXM4-80GB", GPUs: 3,
		NoticeAt: fixedNow.Add(-5 * time.Minute), Deadline: fixedNow.Add(7 * time.Minute)}
	state, _ := json.Marshal(returning)
	jobs := map[string]*kubeflowv1.TFJob{
		"ml/train":  {ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train", Annotations: map[string]string{gpuloan.LoanAnnotation: string(state)}}},
		"ml/other":  {ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "other"}},
		"ml/queued": {ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "queued", Labels: map[string]string{queueing.QueueNameLabel: "gpu"}}},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-0", Labels: map[string]string{colocation.GPUModelLabel: "NVIDIA-A100-SXM4-80GB"}},
		Status: corev1.NodeStatus{Capacity: gpus("8"), Allocatable: gpus("8")}}
	d := &nodeDescription{node: node, jobs: jobs, pods: []corev1.Pod{
		pod("train-worker-0", "train", "2"), pod("train-worker-1", "train", "1"), pod("other-worker-0", "other", "1"),
		pod("queued-worker-0", "queued", "1"), pod("infer-0", "", "2"),
	}}
	var out bytes.Buffer
	if err := renderNodeDescription(&out, d, fixedNow); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "describe-node-gpu-loans", out.String())
}

func TestDescribedObject(t *testing.T) {
	for args, want := range map[string][2]string{
		"mnist":                     {"tfjob", "mnist"},
		"tfjob mnist":               {"tfjob", "mnist"},
		"node gpu-0":                {"node", "gpu-0"},
		"nodes gpu-0":               {"node", "gpu-0"},
		"TFJobs.kubeflow.org mnist": {"tfjob", "mnist"},
		"tfjob.kubeflow.org/mnist":  {"tfjob", "mnist"},
		"node/gpu-0":                {"node", "gpu-0"},
		"pod x":                     {"", ""},
		"pod/x":                     {"", ""},
		"a b c":                     {"", ""},
	} {
		kind, name, err := describedObject(splitArgs(args))
		if got := [2]string{kind, name}; got != want || (want[0] == "") != (err != nil) {
			t.Errorf("describe %s = %v, %v; want %v", args, got, err, want)
		}
	}
}

func splitArgs(s string) []string {
	var out []string
	for _, f := range bytes.Fields([]byte(s)) {
		out = append(out, string(f))
	}
	return out
}
