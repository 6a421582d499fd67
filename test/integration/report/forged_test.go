//go:build integration

package report

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestForgedReplicaPods: where no admission policy stops them, anyone who
// may create pods can make one with the operator's labels and a
// controller reference to another user's TFJob (its UID is readable).
// Such a pod whose name is no replica's, or a replica's name with an index
// beyond the job's replicas, reports nothing for the job (its checkpoint
// would end stop notices early and falsify the goodput). The controller
// does not adopt the one with no replica's name (a suspension leaves it
// alone) and holds neither with its tracking finalizer once deleted; the
// one past the replica count it stops with the job, as it does the
// replicas a smaller count left over.
func TestForgedReplicaPods(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	job, pods := runningJob(t, ns, "victim", 2)
	forged := []*corev1.Pod{forgedPod(t, job, "victim-forged", 0), forgedPod(t, job, "victim-worker-5", 5)}
	for _, pod := range forged {
		runPod(t, pod)
		wantReport(t, ns, "victim", bearer(podToken(t, pod, tfjob.ReportAudience)), `{"step": 7777, "checkpoint": true}`, http.StatusForbidden, "is not a replica of TFJob "+ns+"/victim")
	}
	framework.Consistently(t, "a forged pod's report reached the victim's status", quiet, func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job)
		return err == nil && got.Status.Progress != nil, err
	})
	// The victim's own pods still report.
	wantReport(t, ns, "victim", bearer(podToken(t, pods[0], tfjob.ReportAudience)), `{"step": 1}`, http.StatusNoContent, "")

	framework.Eventually(t, "the victim to be suspended", func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job)
		if err != nil {
			return false, err
		}
		got.Spec.RunPolicy.Suspend = ptr.To(true)
		err = apiServer.Client.Update(ctx, got)
		return err == nil, ignoreConflict(err)
	})
	for _, pod := range pods {
		framework.Eventually(t, "the stop notice of "+pod.Name, func(ctx context.Context) (bool, error) {
			got := &corev1.Pod{}
			err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pod), got)
			return err == nil && got.Annotations[tfjob.StopAtAnnotation] != "", err
		})
	}
	framework.Consistently(t, "the operator stopped the forged pod with no replica's name", quiet, func(ctx context.Context) (bool, error) {
		for _, pod := range forged[:1] {
			got := &corev1.Pod{}
			if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
				return false, err
			}
			if got.Annotations[tfjob.StopAtAnnotation] != "" || got.DeletionTimestamp != nil {
				return true, nil
			}
		}
		return false, nil
	})

	// Deleted, a forged pod that carries the operator's tracking
	// finalizer goes: its end is nothing the job counts.
	for _, pod := range forged {
		if err := apiServer.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, "the deleted forged pod "+pod.Name+" to go", func(ctx context.Context) (bool, error) {
			err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
}

// forgedPod creates a pod named name that claims to be worker index of
// job: the operator's labels, finalizer and controller reference, the
// job's UID included; what only the operator's own pods cannot fake is
// their name.
func forgedPod(t *testing.T, job *kubeflowv1.TFJob, name string, index int) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: job.Namespace, Name: name,
			Labels: map[string]string{
				kubeflowv1.OperatorNameLabel:  kubeflowv1.OperatorName,
				kubeflowv1.JobNameLabel:       job.Name,
				kubeflowv1.LegacyJobNameLabel: job.Name,
				kubeflowv1.ReplicaTypeLabel:   "worker",
				kubeflowv1.ReplicaIndexLabel:  strconv.Itoa(index),
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind, Name: job.Name, UID: job.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
			Finalizers: []string{"backfill.dev/replica-tracking"},
		},
		Spec: corev1.PodSpec{ServiceAccountName: "default", Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "tensorflow/tensorflow:2.13.0"}}},
	}
	if err := apiServer.Client.Create(context.Background(), pod); err != nil {
		t.Fatalf("Creating the forged pod %s: %v", name, err)
	}
	return pod
}
