package gpuloan

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/queueing"
	"github.com/backfill-dev/backfill/internal/tide"
)

// gpuJob is a TFJob of workers each asking gpus, in the pool of model
// ("" for any).
func gpuJob(name string, workers int32, gpus int64, model string) *kubeflowv1.TFJob {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{clusterview.ResourceGPU: *resource.NewQuantity(gpus, resource.DecimalSI)}}}}}
	if model != "" {
		spec.NodeSelector = map[string]string{colocation.GPUModelLabel: model}
	}
	return &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: kubeflowv1.TFJobSpec{
		TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeChief:  {Replicas: ptr.To[int32](1), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow"}}}}},
			kubeflowv1.ReplicaTypeWorker: {Replicas: ptr.To(workers), Template: corev1.PodTemplateSpec{Spec: spec}},
		}}}
}

// nightPool is a pool of 8 GPUs whose online work holds 2 until 04:00,
// when it needs all 8 until 11:00 (t0 is 01:00): with the default lead
// of 30 minutes its free GPUs are lent until 03:30.
func nightPool() gatePool {
	demand := tide.Demand{From: t0, To: t0.Add(36 * time.Hour), Steps: []tide.Step{
		{At: t0, Value: 2}, {At: t0.Add(3 * time.Hour), Value: 8}, {At: t0.Add(10 * time.Hour), Value: 2}}}
	return gatePool{managed: true, pool: tide.Pool{GPUs: 8, Demand: demand, OnlineInUse: 2}}
}

// A new job asking for lent GPUs starts only while the loan leaves it the
// shortest loan and a checkpoint's notice (15 and 16 minutes by default);
// jobs let through are counted until their pods are bound.
func TestGateHoldsNewJobsUntilALoanIsLongEnough(t *testing.T) {
	g := NewGate(DefaultSettings())
	if why, _ := g.Hold(gpuJob("early", 1, 4, ""), t0); why != "" {
		t.Errorf("Before the first decision: held (%s), want to start", why)
	}
	g.decided(map[string]gatePool{"A100": nightPool()}, nil, t0)

	if why, _ := g.Hold(gpuJob("long", 1, 4, "A100"), t0); why != "" {
		t.Errorf("2h30m of loan: held (%s), want to start", why)
	}
	why, retry := g.Hold(gpuJob("rest", 2, 2, ""), t0.Add(time.Minute))
	if !strings.Contains(why, "pool A100 has fewer than 4 GPUs free to lend") || retry != DefaultSettings().Interval {
		t.Errorf("4 GPUs more while 2 are free: %q, retry %v; want held for want of GPUs, asked again at the next decision", why, retry)
	}
	// The first job's pods are bound: its loan is in the decision.
	bound := nightPool()
	bound.pool.Loans = []tide.Loan{{Job: "ns/long", GPUs: 4, Started: t0}}
	g.decided(map[string]gatePool{"A100": bound}, map[string]bool{"ns/long": true}, t0.Add(time.Minute))
	if why, _ := g.Hold(gpuJob("two", 1, 2, ""), t0.Add(time.Minute)); why != "" {
		t.Errorf("2 GPUs of the 2 free: held (%s), want to start", why)
	}

	g.decided(map[string]gatePool{"A100": nightPool()}, nil, t0.Add(2*time.Hour+10*time.Minute))
	why, _ = g.Hold(gpuJob("late", 1, 4, ""), t0.Add(2*time.Hour+10*time.Minute))
	for _, want := range []string{"15m0s of work and 16m0s to write it", "pool A100 lends its free GPUs only until 2026-12-07 03:30 UTC", "next loan from ~2026-12-07 11:00 UTC"} {
		if !strings.Contains(why, want) {
			t.Errorf("20 minutes of loan: %q, want it held saying %q", why, want)
		}
	}
}

// Jobs the gate never holds: those without GPUs, those Kueue admits, and
// those that fit a pool no forecast claims (its GPUs are not lent).
func TestGateLetsOtherJobsThrough(t *testing.T) {
	g := NewGate(DefaultSettings())
	late := t0.Add(2*time.Hour + 10*time.Minute)
	g.decided(map[string]gatePool{"A100": nightPool(), "L4": {}}, nil, late)
	queued := gpuJob("queued", 1, 4, "A100")
	queued.Labels = map[string]string{queueing.QueueNameLabel: "q"}
	for name, job := range map[string]*kubeflowv1.TFJob{
		"no GPUs":             gpuJob("cpu", 1, 0, "A100"),
		"queued with Kueue":   queued,
		"any model":           gpuJob("any", 1, 4, ""),
		"the pool of no one":  gpuJob("l4", 1, 4, "L4"),
		"a model no node has": gpuJob("h100", 1, 4, "H100"),
	} {
		if why, _ := g.Hold(job, late); why != "" {
			t.Errorf("%s: held (%s), want to start", name, why)
		}
	}
	if why, _ := g.Hold(gpuJob("a100", 1, 4, "A100"), late); why == "" {
		t.Error("The A100 pool's 20 minutes of loan: started, want held")
	}
}

// A job admitted but never bound stops being counted after two decisions
// and a minute.
func TestGateForgetsJobsNeverBound(t *testing.T) {
	g := NewGate(DefaultSettings())
	g.decided(map[string]gatePool{"A100": nightPool()}, nil, t0)
	if why, _ := g.Hold(gpuJob("stuck", 1, 6, ""), t0); why != "" {
		t.Fatalf("Held (%s), want to start", why)
	}
	if why, _ := g.Hold(gpuJob("next", 1, 6, ""), t0); why == "" {
		t.Error("6 GPUs more than free: started, want held")
	}
	g.decided(map[string]gatePool{"A100": nightPool()}, nil, t0.Add(3*time.Minute))
	if why, _ := g.Hold(gpuJob("next", 1, 6, ""), t0.Add(3*time.Minute)); why != "" {
		t.Errorf("After the stuck job's admission lapsed: held (%s), want to start", why)
	}
}
