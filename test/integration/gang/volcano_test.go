//go:build integration

package gang

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/test/framework"
)

// Where the cluster serves Volcano's PodGroup (and not Kubernetes' own),
// a distributed TFJob gets a Volcano PodGroup with its minAvailable and
// queue, and its pods name the group and the volcano scheduler.
func TestVolcanoGang(t *testing.T) {
	ctx := context.Background()
	if err := apiServer.CreateNamespace(ctx, "gang"); err != nil {
		t.Fatal(err)
	}
	worker := &kubeflowv1.ReplicaSpec{
		Replicas: ptr.To[int32](3),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Image: "tensorflow/tensorflow:2.13.0"}}}},
	}
	job := &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gang", Name: "resnet"},
		Spec: kubeflowv1.TFJobSpec{
			RunPolicy: kubeflowv1.RunPolicy{SchedulingPolicy: &kubeflowv1.SchedulingPolicy{MinAvailable: ptr.To[int32](2), Queue: "research"}},
			TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
				kubeflowv1.ReplicaTypeWorker: worker,
			},
		},
	}
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}

	pg := &unstructured.Unstructured{}
	pg.SetGroupVersionKind(schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"})
	pod := &corev1.Pod{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: "gang", Name: "resnet"}, pg); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: "gang", Name: "resnet-worker-2"}, pod)
		return err == nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("Waiting for the Volcano PodGroup and the pods: %v", err)
	}
	minMember, _, _ := unstructured.NestedInt64(pg.Object, "spec", "minMember")
	queue, _, _ := unstructured.NestedString(pg.Object, "spec", "queue")
	class, _, _ := unstructured.NestedString(pg.Object, "spec", "priorityClassName")
	if minMember != 2 || queue != "research" || class != "backfill-offline" {
		t.Errorf("PodGroup spec = %v, want minMember 2, queue research, priorityClassName backfill-offline", pg.Object["spec"])
	}
	if refs := pg.GetOwnerReferences(); len(refs) != 1 || refs[0].Name != "resnet" {
		t.Errorf("PodGroup owners = %v, want the TFJob", refs)
	}
	if pod.Annotations["scheduling.k8s.io/group-name"] != "resnet" || pod.Spec.SchedulerName != "volcano" {
		t.Errorf("Pod group annotation %q, schedulerName %q; want resnet and volcano", pod.Annotations["scheduling.k8s.io/group-name"], pod.Spec.SchedulerName)
	}

	// Once the job has succeeded and is retired, so is its PodGroup: the
	// manager's cache holds neither any longer. Worker 0 ends last: its
	// success ends the job.
	for _, name := range []string{"resnet-worker-2", "resnet-worker-1", "resnet-worker-0"} {
		succeed(t, client.ObjectKey{Namespace: "gang", Name: name})
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pg), pg); err != nil {
			return false, err
		}
		return job.Labels[tfjob.RetiredLabel] == "Succeeded" && pg.GetLabels()[tfjob.RetiredLabel] == "true", nil
	})
	if err != nil {
		t.Fatalf("Waiting for the job and its PodGroup to be retired: %v (job labels %v, PodGroup labels %v)", err, job.Labels, pg.GetLabels())
	}
}

// succeed ends a pod's tensorflow container with exit code 0, as its
// kubelet would, again if the operator wrote the pod in between.
func succeed(t *testing.T, key client.ObjectKey) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := apiServer.Client.Get(context.Background(), key, pod); err != nil {
			return err
		}
		pod.Status.Phase = corev1.PodSucceeded
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeflowv1.ContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.Now()}}}}
		return apiServer.Client.Status().Update(context.Background(), pod)
	})
	if err != nil {
		t.Fatalf("Ending pod %s: %v", key.Name, err)
	}
}
