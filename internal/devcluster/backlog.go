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

// The backlog: CPU training jobs that keep arriving in the demo, so that
// reclaimed capacity has work to fill by night and to give back at the
// online peak.
const (
	backlogNamespace = "ml-dev"
	// BacklogLabel marks the backlog's jobs.
	BacklogLabel = "backfill.dev/demo"
	// backlogInFlight is how many backlog jobs are kept unfinished: more
	// than the nodes' idle CPU holds at night, so some wait.
	backlogInFlight = 12
)

// backlogShape is the size of one backlog job.
type backlogShape struct {
	workers int32
	cpu     string
	memory  string
	// hours is how long each worker trains, in hours of the demo's day.
	hours float64
}

// backlogShapes are the jobs of the backlog, in the order they arrive,
// again and again: single workers and small gangs of CPU training.
var backlogShapes = []backlogShape{
	{1, "4", "8Gi", 3},
	{2, "3", "6Gi", 4},
	{3, "2", "4Gi", 2},
	{1, "6", "12Gi", 5},
	{4, "2", "4Gi", 3},
	{2, "4", "8Gi", 2},
}

// backlogJob is the n-th job of the backlog: CPU workers on the CPU nodes,
// each finishing after its hours of the demo's day, removed a minute after
// they finish. They stay off the GPU nodes, whose CPU and memory the GPU
// jobs need beside their GPUs, as a GPU node's taint would keep them off
// on a real cluster.
func backlogJob(n int, day clock) *kubeflowv1.TFJob {
	shape := backlogShapes[n%len(backlogShapes)]
	runFor := time.Duration(shape.hours * float64(day.dayLength) / 24).Round(time.Second)
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(shape.cpu), corev1.ResourceMemory: resource.MustParse(shape.memory)}
	workers, ttl := shape.workers, int32(60)
	return &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: backlogNamespace, Name: fmt.Sprintf("backlog-%03d", n), Labels: map[string]string{BacklogLabel: "backlog"}},
		Spec: kubeflowv1.TFJobSpec{
			RunPolicy: kubeflowv1.RunPolicy{TTLSecondsAfterFinished: &ttl},
			TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{kubeflowv1.ReplicaTypeWorker: {
				Replicas:      &workers,
				RestartPolicy: kubeflowv1.RestartPolicyOnFailure,
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kwok.SimDurationAnnotation: runFor.String()}},
					Spec: corev1.PodSpec{
						NodeSelector: map[string]string{kwok.NodeTypeLabel: kwok.NodeTypeCPU},
						Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "registry.example.com/ml/cpu-train:2.13",
							Resources: corev1.ResourceRequirements{Requests: res, Limits: res}}},
					},
				},
			}},
		},
	}
}

// runBacklog keeps backlogInFlight backlog jobs unfinished, submitting the
// next one whenever fewer are, until ctx ends.
func runBacklog(ctx context.Context, c client.Client, day clock) {
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	next := 0
	for {
		if err := topUpBacklog(ctx, c, day, &next); err != nil && ctx.Err() == nil {
			ctrl.Log.V(1).Info("Submitting backlog jobs", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// topUpBacklog submits backlog jobs until backlogInFlight are unfinished.
func topUpBacklog(ctx context.Context, c client.Client, day clock, next *int) error {
	var jobs kubeflowv1.TFJobList
	if err := c.List(ctx, &jobs, client.InNamespace(backlogNamespace), client.MatchingLabels{BacklogLabel: "backlog"}); err != nil {
		return err
	}
	unfinished := 0
	for _, j := range jobs.Items {
		if !finished(&j) {
			unfinished++
		}
	}
	for ; unfinished < backlogInFlight; unfinished++ {
		if err := c.Create(ctx, backlogJob(*next, day)); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
		*next++
	}
	return nil
}

// finished reports whether a job succeeded or failed.
func finished(j *kubeflowv1.TFJob) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == kubeflowv1.JobSucceeded || c.Type == kubeflowv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
