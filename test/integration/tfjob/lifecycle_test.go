//go:build integration

package tfjob

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// jobBuilder builds test TFJobs: makeJob(ns, "j").replicas(Worker, 2, OnFailure).obj().
type jobBuilder struct{ job *kubeflowv1.TFJob }

func makeJob(ns, name string) *jobBuilder {
	return &jobBuilder{&kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
	}}
}

func (b *jobBuilder) replicas(rtype kubeflowv1.ReplicaType, n int32, policy kubeflowv1.RestartPolicy) *jobBuilder {
	b.job.Spec.TFReplicaSpecs[rtype] = &kubeflowv1.ReplicaSpec{
		Replicas:      ptr.To(n),
		RestartPolicy: policy,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: kubeflowv1.ContainerName, Image: "tensorflow/tensorflow:2.13.0",
		}}}},
	}
	return b
}

func (b *jobBuilder) run(f func(*kubeflowv1.RunPolicy)) *jobBuilder {
	f(&b.job.Spec.RunPolicy)
	return b
}

func (b *jobBuilder) successPolicy(p kubeflowv1.SuccessPolicy) *jobBuilder {
	b.job.Spec.SuccessPolicy = &p
	return b
}

// create creates the job and returns its replicas' pods once they exist.
func (b *jobBuilder) create(t *testing.T, wantPods ...string) (*kubeflowv1.TFJob, map[string]*corev1.Pod) {
	t.Helper()
	if err := apiServer.Client.Create(context.Background(), b.job); err != nil {
		t.Fatalf("Creating TFJob %s: %v", b.job.Name, err)
	}
	return b.job, waitForPods(t, b.job.Namespace, wantPods...)
}

func cleanPolicy(p kubeflowv1.CleanPodPolicy) func(*kubeflowv1.RunPolicy) {
	return func(r *kubeflowv1.RunPolicy) { r.CleanPodPolicy = &p }
}

func TestBackoffLimit(t *testing.T) {
	t.Run("a failure beyond the limit fails the job", func(t *testing.T) {
		ns := newNamespace(t, "")
		job, pods := makeJob(ns, "retry").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyExitCode).
			run(func(r *kubeflowv1.RunPolicy) { r.BackoffLimit = ptr.To[int32](1) }).create(t, "retry-worker-0")
		endPod(t, pods["retry-worker-0"], 137)
		second := waitForNewPod(t, ns, "retry-worker-0", string(pods["retry-worker-0"].UID))
		endPod(t, second, 143)
		failed := waitForCondition(t, ns, job.Name, kubeflowv1.JobFailed)
		if reason := lastCondition(failed).Reason; reason != "BackoffLimitExceeded" {
			t.Errorf("Failed reason = %s, want BackoffLimitExceeded", reason)
		}
		waitForEvent(t, ns, job.Name, "BackoffLimitExceeded")
		framework.Consistently(t, "a third pod", quiet, func(ctx context.Context) (bool, error) {
			pod := &corev1.Pod{}
			err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "retry-worker-0"}, pod)
			return err == nil && pod.UID != second.UID, client.IgnoreNotFound(err)
		})
	})
	t.Run("restarts within the limit do not", func(t *testing.T) {
		ns := newNamespace(t, "")
		job, pods := makeJob(ns, "retry").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyExitCode).
			run(func(r *kubeflowv1.RunPolicy) { r.BackoffLimit = ptr.To[int32](2) }).create(t, "retry-worker-0")
		endPod(t, pods["retry-worker-0"], 137)
		second := waitForNewPod(t, ns, "retry-worker-0", string(pods["retry-worker-0"].UID))
		endPod(t, second, 0)
		done := waitForCondition(t, ns, job.Name, kubeflowv1.JobSucceeded)
		if done.Status.Restarts != 1 {
			t.Errorf("status.restarts = %d, want 1", done.Status.Restarts)
		}
	})
	t.Run("container restarts in place count too", func(t *testing.T) {
		ns := newNamespace(t, "")
		job, pods := makeJob(ns, "crash").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyOnFailure).
			run(func(r *kubeflowv1.RunPolicy) { r.BackoffLimit = ptr.To[int32](2) }).create(t, "crash-worker-0")
		apiServer.SetPodStatus(t, pods["crash-worker-0"], func(s *corev1.PodStatus) {
			s.Phase = corev1.PodRunning
			s.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeflowv1.ContainerName, RestartCount: 2,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		})
		waitForCondition(t, ns, job.Name, kubeflowv1.JobRunning)
		apiServer.SetPodStatus(t, pods["crash-worker-0"], func(s *corev1.PodStatus) { s.ContainerStatuses[0].RestartCount = 3 })
		failed := waitForCondition(t, ns, job.Name, kubeflowv1.JobFailed)
		if reason := lastCondition(failed).Reason; reason != "BackoffLimitExceeded" {
			t.Errorf("Failed reason = %s, want BackoffLimitExceeded", reason)
		}
		waitGone(t, pods["crash-worker-0"]) // still running: stopped under cleanPodPolicy Running
	})
}

// activeDeadlineSeconds fires on time with no other event (Kubeflow v1
// #3358 waited for one).
func TestActiveDeadline(t *testing.T) {
	t.Run("fires with no other event", func(t *testing.T) {
		ns := newNamespace(t, "")
		job, pods := makeJob(ns, "deadline").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyNever).
			run(func(r *kubeflowv1.RunPolicy) { r.ActiveDeadlineSeconds = ptr.To[int64](2) }).create(t, "deadline-worker-0")
		runPod(t, pods["deadline-worker-0"])
		failed := waitForCondition(t, ns, job.Name, kubeflowv1.JobFailed)
		if reason := lastCondition(failed).Reason; reason != "DeadlineExceeded" {
			t.Errorf("Failed reason = %s, want DeadlineExceeded", reason)
		}
		if took := failed.Status.CompletionTime.Sub(failed.Status.StartTime.Time); took < 2*time.Second {
			t.Errorf("Failed %v after start, before the 2s deadline", took)
		}
		waitGone(t, pods["deadline-worker-0"])
		waitForEvent(t, ns, job.Name, "DeadlineExceeded")
	})
	t.Run("does not fire before it is due", func(t *testing.T) {
		ns := newNamespace(t, "")
		job, pods := makeJob(ns, "deadline").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyNever).
			run(func(r *kubeflowv1.RunPolicy) { r.ActiveDeadlineSeconds = ptr.To[int64](3600) }).create(t, "deadline-worker-0")
		runPod(t, pods["deadline-worker-0"])
		waitForCondition(t, ns, job.Name, kubeflowv1.JobRunning)
		endPod(t, pods["deadline-worker-0"], 0)
		waitForCondition(t, ns, job.Name, kubeflowv1.JobSucceeded)
	})
}

// A finished job is deleted ttlSecondsAfterFinished after it finished; one
// without a TTL is kept.
func TestTTLAfterFinished(t *testing.T) {
	ns := newNamespace(t, "")
	short, shortPods := makeJob(ns, "short").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyNever).
		run(func(r *kubeflowv1.RunPolicy) { r.TTLSecondsAfterFinished = ptr.To[int32](1) }).create(t, "short-worker-0")
	kept, keptPods := makeJob(ns, "kept").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyNever).create(t, "kept-worker-0")
	endPod(t, keptPods["kept-worker-0"], 0)
	waitForCondition(t, ns, kept.Name, kubeflowv1.JobSucceeded)
	endPod(t, shortPods["short-worker-0"], 0)
	waitForCondition(t, ns, short.Name, kubeflowv1.JobSucceeded)

	waitGone(t, short)
	waitForEvent(t, ns, short.Name, "TTLExpired")
	if _, err := getJob(context.Background(), ns, kept.Name); err != nil {
		t.Errorf("The job without a TTL, finished first, is gone: %v", err)
	}
}

// cleanPodPolicy decides which pods outlive a finished job; unset means the
// manager's default, Running, which stops parameter servers (Kubeflow v1
// left them running, #774).
func TestCleanPodPolicy(t *testing.T) {
	cases := map[string]struct {
		policy                 *kubeflowv1.CleanPodPolicy
		wantWorker, wantPSKept bool
	}{
		"All":           {policy: ptr.To(kubeflowv1.CleanPodPolicyAll)},
		"Running":       {policy: ptr.To(kubeflowv1.CleanPodPolicyRunning), wantWorker: true},
		"None":          {policy: ptr.To(kubeflowv1.CleanPodPolicyNone), wantWorker: true, wantPSKept: true},
		"unset=Running": {wantWorker: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t, "")
			b := makeJob(ns, "clean").replicas(kubeflowv1.ReplicaTypePS, 1, kubeflowv1.RestartPolicyNever).
				replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyNever)
			b.job.Spec.RunPolicy.CleanPodPolicy = tc.policy
			job, pods := b.create(t, "clean-ps-0", "clean-worker-0")
			runPod(t, pods["clean-ps-0"])
			endPod(t, pods["clean-worker-0"], 0)
			waitForCondition(t, ns, job.Name, kubeflowv1.JobSucceeded)

			for pod, want := range map[string]bool{"clean-worker-0": tc.wantWorker, "clean-ps-0": tc.wantPSKept} {
				if !want {
					waitGone(t, pods[pod])
					continue
				}
				framework.Consistently(t, pod+" deleted", quiet, func(ctx context.Context) (bool, error) {
					exists, err := podExists(ctx, ns, pod)
					return !exists, err
				})
			}
		})
	}
}

// A replica that succeeded is never started again, even when its pod is
// deleted (Kubeflow v1 #1186); a finished job creates no pods at all.
func TestFinishedReplicasStayFinished(t *testing.T) {
	ns := newNamespace(t, "")
	job, pods := makeJob(ns, "all").replicas(kubeflowv1.ReplicaTypePS, 1, kubeflowv1.RestartPolicyNever).
		replicas(kubeflowv1.ReplicaTypeWorker, 2, kubeflowv1.RestartPolicyNever).
		successPolicy(kubeflowv1.SuccessPolicyAllWorkers).run(cleanPolicy(kubeflowv1.CleanPodPolicyNone)).
		create(t, "all-ps-0", "all-worker-0", "all-worker-1")
	endPod(t, pods["all-worker-0"], 0)
	framework.Eventually(t, "worker 0 recorded as succeeded", func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, ns, job.Name)
		return err == nil && got.Status.ReplicaStatuses[kubeflowv1.ReplicaTypeWorker].Succeeded == 1, err
	})
	if got, _ := getJob(context.Background(), ns, job.Name); lastCondition(got).Type == kubeflowv1.JobSucceeded {
		t.Fatal("AllWorkers: the job succeeded with worker 1 still running")
	}

	if err := apiServer.Client.Delete(context.Background(), pods["all-worker-0"]); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pods["all-worker-0"])
	framework.Consistently(t, "succeeded worker 0 started again", quiet, func(ctx context.Context) (bool, error) {
		return podExists(ctx, ns, "all-worker-0")
	})

	endPod(t, pods["all-worker-1"], 0)
	waitForCondition(t, ns, job.Name, kubeflowv1.JobSucceeded)
	if err := apiServer.Client.Delete(context.Background(), pods["all-ps-0"]); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pods["all-ps-0"])
	framework.Consistently(t, "a finished job created a pod", quiet, func(ctx context.Context) (bool, error) {
		return podExists(ctx, ns, "all-ps-0")
	})
}

// Suspending removes a job's pods and services; resuming brings them back
// and restarts the deadline clock (Kueue admits jobs this way).
func TestSuspendAndResume(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "")
	job := makeJob(ns, "queued").replicas(kubeflowv1.ReplicaTypeWorker, 2, kubeflowv1.RestartPolicyNever).
		run(func(r *kubeflowv1.RunPolicy) { r.Suspend = ptr.To(true) }).job
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	suspended := waitForCondition(t, ns, job.Name, kubeflowv1.JobSuspended)
	if suspended.Status.StartTime != nil {
		t.Errorf("Suspended job has startTime %v", suspended.Status.StartTime)
	}
	framework.Consistently(t, "a suspended job created a pod", quiet, func(ctx context.Context) (bool, error) {
		return podExists(ctx, ns, "queued-worker-0")
	})

	setSuspend(t, ns, job.Name, false)
	pods := waitForPods(t, ns, "queued-worker-0", "queued-worker-1")
	framework.Eventually(t, "resumed status", func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, ns, job.Name)
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == kubeflowv1.JobSuspended {
				return c.Status == corev1.ConditionFalse && c.Reason == "TFJobResumed" && got.Status.StartTime != nil, nil
			}
		}
		return false, nil
	})

	setSuspend(t, ns, job.Name, true)
	for _, pod := range pods {
		waitGone(t, pod)
	}
	waitGone(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "queued-worker-0"}})
	waitForCondition(t, ns, job.Name, kubeflowv1.JobSuspended)
	waitForEvent(t, ns, job.Name, "TFJobSuspended")
}

func setSuspend(t *testing.T, ns, name string, suspend bool) {
	t.Helper()
	job, err := getJob(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"runPolicy":{"suspend":%t}}}`, suspend))
	if err := apiServer.Client.Patch(context.Background(), job, patch); err != nil {
		t.Fatalf("Setting suspend=%t: %v", suspend, err)
	}
}

// Jobs managed by MultiKueue belong to another cluster's operator: backfill
// leaves them alone. Unset and the training-operator value are ours.
func TestManagedBy(t *testing.T) {
	ns := newNamespace(t, "")
	foreign := makeJob(ns, "remote").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyNever).
		run(func(r *kubeflowv1.RunPolicy) { r.ManagedBy = ptr.To(kubeflowv1.ManagedByMultiKueue) }).job
	if err := apiServer.Client.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	makeJob(ns, "local").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyNever).
		run(func(r *kubeflowv1.RunPolicy) { r.ManagedBy = ptr.To(kubeflowv1.ManagedByTrainingOperator) }).
		create(t, "local-worker-0")
	framework.Consistently(t, "backfill acted on a MultiKueue job", quiet, func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, ns, foreign.Name)
		if err != nil {
			return false, err
		}
		exists, err := podExists(ctx, ns, "remote-worker-0")
		return exists || len(got.Status.Conditions) > 0, err
	})
}
