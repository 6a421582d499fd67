package gpuloan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/queueing"
)

var t0 = time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)

func gpuNode(name, model string, gpus int64) *clusterview.Node {
	return &clusterview.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Allocatable: colocation.Resources{GPU: gpus}, GPUModel: model}
}

func gpuPod(name, node string, tier colocation.Tier, job string, gpus int64, started time.Time) *clusterview.Pod {
	return &clusterview.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)}, Node: node, Phase: corev1.PodRunning,
		Tier: tier, TFJob: job, Requests: colocation.Resources{GPU: gpus}, Started: started}
}

// The cluster as a decision reads it: pools by model (nodes without GPUs
// in none), online GPUs, loans by job, and Kueue's jobs' GPUs as taken.
func TestClusterOf(t *testing.T) {
	nodes := []*clusterview.Node{gpuNode("a-0", "A100", 4), gpuNode("a-1", "A100", 4), gpuNode("x-0", "", 2), gpuNode("cpu-0", "", 0)}
	state := LoanState{Phase: PhaseReturning, Pool: "A100", GPUs: 4, Deadline: t0.Add(time.Hour), CheckpointSeconds: 120}
	train := kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", Annotations: map[string]string{LoanAnnotation: state.annotation()}}}
	train.Status.Progress = &kubeflowv1.Progress{CheckpointTime: &metav1.Time{Time: t0.Add(-time.Minute)}}
	queued := kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "queued", Labels: map[string]string{queueing.QueueNameLabel: "q"}}}
	gone := gpuPod("train-worker-2", "a-1", colocation.TierOffline, "train", 1, t0)
	gone.DeletionTimestamp = &metav1.Time{Time: t0}
	pods := []*clusterview.Pod{
		gpuPod("infer-0", "a-0", colocation.TierOnline, "", 2, t0),
		gpuPod("train-worker-0", "a-0", colocation.TierOffline, "train", 2, t0.Add(time.Minute)),
		gpuPod("train-worker-1", "a-1", colocation.TierOffline, "train", 2, t0),
		gone,
		gpuPod("queued-worker-0", "a-1", colocation.TierOffline, "queued", 2, t0),
		gpuPod("web-0", "cpu-0", colocation.TierOnline, "", 0, t0),
		gpuPod("other-0", "x-0", colocation.TierOffline, "other", 1, time.Time{}),
	}
	cl := clusterOf(nodes, pods, []kubeflowv1.TFJob{train, queued})
	if got := sortedPools(cl.pools); !cmp.Equal(got, []string{"A100", PoolUnlabelled}) {
		t.Errorf("Pools = %v, want A100 and %s", got, PoolUnlabelled)
	}
	if cl.pools["A100"].gpus != 8 || cl.online["A100"] != 2 || cl.taken["A100"] != 2 || cl.lent("A100") != 4 || cl.lent(PoolUnlabelled) != 1 {
		t.Errorf("A100: %d GPUs, online %d, taken %d, lent %d; unlabelled lent %d; want 8, 2, 2, 4, 1",
			cl.pools["A100"].gpus, cl.online["A100"], cl.taken["A100"], cl.lent("A100"), cl.lent(PoolUnlabelled))
	}
	l := cl.loans["A100"]["ns/train"]
	if l == nil {
		t.Fatal("No loan of ns/train")
	}
	want := struct {
		Job                     string
		GPUs                    int
		Started, Last, Deadline time.Time
		Checkpoint              time.Duration
	}{"ns/train", 4, t0, t0.Add(-time.Minute), t0.Add(time.Hour), 2 * time.Minute}
	got := l.loan()
	if got.Job != want.Job || got.GPUs != want.GPUs || !got.Started.Equal(want.Started) || !got.LastCheckpoint.Equal(want.Last) ||
		!got.Deadline.Equal(want.Deadline) || got.CheckpointTime != want.Checkpoint {
		t.Errorf("Loan = %+v, want %+v", got, want)
	}
	if n := len(cl.jobPods["ns/train"]); n != 3 {
		t.Errorf("Pods of ns/train = %d, want 3 (the one being deleted too)", n)
	}
}

// jobWithCheckpoint is a TFJob whose last checkpoint is at (none if zero).
func jobWithCheckpoint(at time.Time) *kubeflowv1.TFJob {
	job := &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train"}}
	if !at.IsZero() {
		job.Status.Progress = &kubeflowv1.Progress{CheckpointTime: &metav1.Time{Time: at}}
	}
	return job
}
