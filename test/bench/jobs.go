package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// replicasPerJob: a chief, 4 workers and 2 parameter servers.
const replicasPerJob = 7

// tfJob is the benchmark's job: a chief, 4 GPU workers and 2 parameter
// servers, shaped like examples/tfjob-distributed.yaml.
func tfJob(namespace, name string) *kubeflowv1.TFJob {
	replica := func(n int32, gpu bool) *kubeflowv1.ReplicaSpec {
		res := corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("2"),
			corev1.ResourceMemory: resource.MustParse("4Gi"),
		}}
		if gpu {
			res.Requests["nvidia.com/gpu"] = resource.MustParse("1")
			res.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		}
		return &kubeflowv1.ReplicaSpec{
			Replicas:      &n,
			RestartPolicy: kubeflowv1.RestartPolicyOnFailure,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name:      kubeflowv1.ContainerName,
				Image:     "registry.example.com/ml/train:latest",
				Resources: res,
			}}}},
		}
	}
	return &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeChief:  replica(1, true),
			kubeflowv1.ReplicaTypeWorker: replica(4, true),
			kubeflowv1.ReplicaTypePS:     replica(2, false),
		}},
	}
}

// singleWorkerJob is the commonest TFJob: one GPU worker, no chief, no
// parameter server.
func singleWorkerJob(namespace, name string) *kubeflowv1.TFJob {
	job := tfJob(namespace, name)
	delete(job.Spec.TFReplicaSpecs, kubeflowv1.ReplicaTypeChief)
	delete(job.Spec.TFReplicaSpecs, kubeflowv1.ReplicaTypePS)
	one := int32(1)
	job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Replicas = &one
	return job
}

// jobNames are prefix-00000, prefix-00001, ...
func jobNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%05d", prefix, i)
	}
	return names
}

// createJobs creates the benchmark's jobs with up to concurrency requests
// at once and returns how long it took.
func createJobs(ctx context.Context, c client.Client, namespace string, names []string, concurrency int) (time.Duration, error) {
	return createJobsOf(ctx, c, tfJob, namespace, names, concurrency)
}

// createJobsOf creates the jobs build makes.
func createJobsOf(ctx context.Context, c client.Client, build func(namespace, name string) *kubeflowv1.TFJob, namespace string, names []string, concurrency int) (time.Duration, error) {
	start := time.Now()
	err := forEach(ctx, names, concurrency, func(ctx context.Context, name string) error {
		if err := c.Create(ctx, build(namespace, name)); err != nil {
			return fmt.Errorf("creating TFJob %s: %w", name, err)
		}
		return nil
	})
	return time.Since(start), err
}

// forEach runs f on every item, up to concurrency at once, and stops at
// the first error.
func forEach[T any](ctx context.Context, items []T, concurrency int, f func(context.Context, T) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for _, item := range items {
		g.Go(func() error { return f(gctx, item) })
	}
	return g.Wait()
}

// patchPodStatus writes a pod's status through the status subresource,
// as a kubelet would: the tensorflow container running, or ended with
// exit code 0 and the pod Succeeded.
func patchPodStatus(ctx context.Context, c client.Client, namespace, name string, phase corev1.PodPhase) error {
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	if phase == corev1.PodSucceeded {
		state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: metav1.Now()}}
	}
	status := corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name: kubeflowv1.ContainerName, Image: "registry.example.com/ml/train:latest",
		Ready: phase == corev1.PodRunning, State: state,
	}}}
	patch, err := client.MergeFrom(&corev1.Pod{}).Data(&corev1.Pod{Status: status})
	if err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Status().Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("marking pod %s %s: %w", name, phase, err)
	}
	return nil
}
