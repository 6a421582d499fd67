//go:build integration

package tfjob

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// loadExample reads a manifest of examples/ unchanged.
func loadExample(t *testing.T, file string) *kubeflowv1.TFJob {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.ExamplesDir(), file))
	if err != nil {
		t.Fatalf("Reading example: %v", err)
	}
	job := &kubeflowv1.TFJob{}
	if err := yaml.UnmarshalStrict(data, job); err != nil {
		t.Fatalf("Decoding %s: %v", file, err)
	}
	return job
}

// getJob reads a job from the apiserver.
func getJob(ctx context.Context, ns, name string) (*kubeflowv1.TFJob, error) {
	job := &kubeflowv1.TFJob{}
	return job, apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)
}

// waitForCondition waits until the job's last condition is ctype.
func waitForCondition(t *testing.T, ns, name string, ctype kubeflowv1.JobConditionType) *kubeflowv1.TFJob {
	t.Helper()
	var job *kubeflowv1.TFJob
	framework.Eventually(t, "TFJob "+name+" to be "+string(ctype), func(ctx context.Context) (bool, error) {
		var err error
		if job, err = getJob(ctx, ns, name); err != nil {
			return false, err
		}
		c := job.Status.Conditions
		return len(c) > 0 && c[len(c)-1].Type == ctype && c[len(c)-1].Status == corev1.ConditionTrue, nil
	})
	return job
}

// waitForPods waits until the named pods exist and returns them.
func waitForPods(t *testing.T, ns string, names ...string) map[string]*corev1.Pod {
	t.Helper()
	pods := map[string]*corev1.Pod{}
	framework.Eventually(t, "pods to exist", func(ctx context.Context) (bool, error) {
		for _, name := range names {
			pod := &corev1.Pod{}
			if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			pods[name] = pod
		}
		return true, nil
	})
	return pods
}

// waitForNewPod waits until the pod of name has a UID other than old.
func waitForNewPod(t *testing.T, ns, name string, old string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	framework.Eventually(t, "pod "+name+" to be recreated", func(ctx context.Context) (bool, error) {
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return string(pod.UID) != old, nil
	})
	return pod
}

// waitGone waits until the object is deleted.
func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	framework.Eventually(t, obj.GetName()+" to be deleted", func(ctx context.Context) (bool, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// runPod marks a pod Running, as a kubelet would.
func runPod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	apiServer.SetPodStatus(t, pod, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.ContainerStatuses = []corev1.ContainerStatus{{
			Name: kubeflowv1.ContainerName, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
		}}
	})
}

// endPod marks a pod's tensorflow container exited with code, and the pod
// Succeeded (code 0) or Failed, as a kubelet would.
func endPod(t *testing.T, pod *corev1.Pod, code int32) {
	t.Helper()
	apiServer.SetPodStatus(t, pod, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodSucceeded
		if code != 0 {
			s.Phase = corev1.PodFailed
		}
		s.ContainerStatuses = []corev1.ContainerStatus{{
			Name:  kubeflowv1.ContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.Now()}},
		}}
	})
}

// deleteNamespace deletes a namespace; the namespace controller removes
// its contents in the background.
func deleteNamespace(t *testing.T, name string) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := apiServer.Client.Delete(context.Background(), ns); client.IgnoreNotFound(err) != nil {
		t.Errorf("Deleting namespace %s: %v", name, err)
	}
}

// quiet is how long a test watches for something that must not happen.
const quiet = 2 * time.Second

// podExists reports whether a pod of that name exists.
func podExists(ctx context.Context, ns, name string) (bool, error) {
	err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Pod{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// waitForEvent waits for an event with the reason about the job.
func waitForEvent(t *testing.T, ns, job, reason string) {
	t.Helper()
	framework.Eventually(t, "event "+reason, func(ctx context.Context) (bool, error) {
		var events eventsv1.EventList
		if err := apiServer.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == job && e.Reason == reason {
				return true, nil
			}
		}
		return false, nil
	})
}

// lastCondition is the job's state.
func lastCondition(job *kubeflowv1.TFJob) kubeflowv1.JobCondition {
	if len(job.Status.Conditions) == 0 {
		return kubeflowv1.JobCondition{}
	}
	return job.Status.Conditions[len(job.Status.Conditions)-1]
}
