package devcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// The GPU backlog: training submitted from the evening into the night,
// which borrows the GPUs the inference leaves (GPU loans). A job that
// starts in the evening finishes in the night and the next one, started
// then, trains into the morning: each morning some return their GPUs,
// pause, and resume the next evening. It starts on the first evening: the
// first night's GPUs are the example jobs'.
const (
	// gpuBacklogValue is the BacklogLabel value of the GPU backlog's jobs.
	gpuBacklogValue = "gpu-backlog"
	// gpuBacklogInFlight is how many GPU backlog jobs are kept unfinished.
	gpuBacklogInFlight = 2
	// gpuBacklogLastHour is the last hour of the compressed night a GPU
	// backlog job is submitted: well before the morning's stop notice, so
	// that each job gets its whole checkpoint time of notice.
	gpuBacklogLastHour = inferenceMorning - 2
)

// gpuBacklogHours are how long each GPU backlog job trains, in hours of
// the compressed day, in the order they arrive.
var gpuBacklogHours = []float64{6, 5}

// gpuBacklogWorkers is the workers (of one GPU each) of a GPU backlog job:
// half the GPUs the night's inference leaves and the loans may lend (less
// the tenth of the pool held back before each rise), 0 when none are.
func (o Options) gpuBacklogWorkers() int32 {
	total := o.GPUNodes * o.GPUsPerNode
	free := total - inferenceNightReplicas*o.inferenceGPUs() - total/10
	return int32(max(free/gpuBacklogInFlight, 0))
}

// gpuBacklogSubmits says whether GPU backlog jobs are submitted at hour h
// of the compressed day: from the inference's evening until
// gpuBacklogLastHour.
func gpuBacklogSubmits(h float64) bool {
	return h >= inferenceEvening || h < gpuBacklogLastHour
}

// gpuBacklogJob is the n-th GPU backlog job: workers of one GPU each on the
// GPU nodes, each training its hours of the compressed day, removed a
// minute after the job finishes.
func (o Options) gpuBacklogJob(n int, day clock) *kubeflowv1.TFJob {
	hours := gpuBacklogHours[n%len(gpuBacklogHours)]
	runFor := time.Duration(hours * float64(day.dayLength) / 24).Round(time.Second)
	res := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("6Gi"),
		corev1.ResourceName(kwok.GPUResource): resource.MustParse("1"),
	}
	workers, ttl := o.gpuBacklogWorkers(), int32(60)
	return &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: backlogNamespace, Name: fmt.Sprintf("gpu-train-%03d", n), Labels: map[string]string{BacklogLabel: gpuBacklogValue}},
		Spec: kubeflowv1.TFJobSpec{
			RunPolicy: kubeflowv1.RunPolicy{TTLSecondsAfterFinished: &ttl},
			TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{kubeflowv1.ReplicaTypeWorker: {
				Replicas:      &workers,
				RestartPolicy: kubeflowv1.RestartPolicyOnFailure,
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kwok.SimDurationAnnotation: runFor.String()}},
					Spec: corev1.PodSpec{
						NodeSelector: map[string]string{kwok.NodeTypeLabel: kwok.NodeTypeGPU},
						Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "registry.example.com/ml/gpu-train:2.13",
							Resources: corev1.ResourceRequirements{Requests: res, Limits: res}}},
					},
				},
			}},
		},
	}
}

// runGPUBacklog keeps gpuBacklogInFlight GPU backlog jobs unfinished while
// gpuBacklogSubmits, from the first evening until ctx ends.
func (o Options) runGPUBacklog(ctx context.Context, c client.Client, day clock) {
	tick := time.NewTicker(max(day.dayLength/(24*12), time.Second))
	defer tick.Stop()
	firstEvening := day.start.Add(time.Duration(inferenceEvening / 24 * float64(day.dayLength)))
	next := 0
	for {
		if now := time.Now(); !now.Before(firstEvening) && gpuBacklogSubmits(day.hour(now)) {
			if err := o.topUpGPUBacklog(ctx, c, day, &next); err != nil && ctx.Err() == nil {
				ctrl.Log.V(1).Info("Submitting GPU backlog jobs", "error", err.Error())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// topUpGPUBacklog submits GPU backlog jobs until gpuBacklogInFlight are
// unfinished; a job paused for the morning is unfinished.
func (o Options) topUpGPUBacklog(ctx context.Context, c client.Client, day clock, next *int) error {
	var jobs kubeflowv1.TFJobList
	if err := c.List(ctx, &jobs, client.InNamespace(backlogNamespace), client.MatchingLabels{BacklogLabel: gpuBacklogValue}); err != nil {
		return err
	}
	unfinished := 0
	for _, j := range jobs.Items {
		if !finished(&j) {
			unfinished++
		}
	}
	for ; unfinished < gpuBacklogInFlight; unfinished++ {
		if err := c.Create(ctx, o.gpuBacklogJob(*next, day)); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
		*next++
	}
	return nil
}
