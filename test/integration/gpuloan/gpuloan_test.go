//go:build integration

package gpuloan

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/tide"
	"github.com/backfill-dev/backfill/test/framework"
)

// A night's loan: KEDA keeps the inference Deployment at 1 replica of 4
// GPUs outside its window and scales it to 3 (the pool's 12 GPUs) inside;
// the window opens within a minute or two, and a TFJob holds the 8 GPUs
// left. The job is told a checkpoint's time before the window less the
// Deployment's warm-up, pauses (not fails), the window's pods find their
// GPUs free, and the job resumes once the window closes.
func TestLoanReturnedBeforeTheMorning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The window opens at the first whole minute at least 40 s away (the
	// training pods start and run meanwhile) and lasts a minute.
	start := time.Now().Add(40 * time.Second).Truncate(time.Minute).Add(time.Minute).UTC()
	end := start.Add(time.Minute)
	deadline := start.Add(-warmUp)
	if err := apiServer.Client.Create(ctx, inference("infer", minReplicas)); err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Client.Create(ctx, scaledObject("infer", start, end)); err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Client.Create(ctx, training("train", 2)); err != nil {
		t.Fatal(err)
	}
	within(t, "the training pods to run on the 8 GPUs inference leaves", time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "train")
		return running(pods) == 2, err
	})

	within(t, "the training pods' stop notice", time.Until(deadline)+30*time.Second, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "train")
		noticed := 0
		for _, p := range pods {
			if p.Annotations[colocation.StopReasonAnnotation] == colocation.ReasonGPUsReturnedToOnline {
				noticed++
				if at := p.Annotations[colocation.StopAtAnnotation]; at != deadline.Format(time.RFC3339) {
					return false, fmt.Errorf("pod %s must stop at %s, the window's start less the warm-up; its notice says %s", p.Name, deadline.Format(time.RFC3339), at)
				}
			}
		}
		return noticed == 2, err
	})
	// The pods are told first, then the job's state is written.
	within(t, "the job's loan state", 30*time.Second, func(ctx context.Context) (bool, error) {
		j := &kubeflowv1.TFJob{}
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: offlineNS, Name: "train"}, j); err != nil {
			return false, err
		}
		_, ok, err := gpuloan.ReadLoanState(j.Annotations)
		return ok, err
	})
	s := loanState(t, "train")
	if s.Phase != gpuloan.PhaseReturning && s.Phase != gpuloan.PhasePaused {
		t.Fatalf("Loan state %+v, want Returning or Paused", s)
	}
	if !s.NoticeAt.Before(s.Deadline) || !s.Deadline.Equal(deadline) || s.Short {
		t.Errorf("Loan state %+v: want a notice of the whole checkpoint time before the deadline %s", s, deadline)
	}

	within(t, "the job to pause and its pods to go", time.Until(deadline)+30*time.Second, func(ctx context.Context) (bool, error) {
		j := &kubeflowv1.TFJob{}
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: offlineNS, Name: "train"}, j); err != nil {
			return false, err
		}
		pods, err := jobPods(ctx, "train")
		c := lastCondition(j)
		return ptr.Deref(j.Spec.RunPolicy.Suspend, false) && len(pods) == 0 && c != nil && c.Type == kubeflowv1.JobSuspended &&
			c.Reason == colocation.ReasonGPUsReturnedToOnline && strings.Contains(c.Message, "returned 8 GPUs"), err
	})
	if s := loanState(t, "train"); s.Phase != gpuloan.PhasePaused || !s.NextLoan.Equal(end) {
		t.Errorf("Loan state %+v, want Paused with the next loan at the window's end %s", s, end)
	}

	// The window: KEDA's HPA scales the Deployment up.
	within(t, "the window's pods to run on the GPUs the job returned", time.Until(start)+2*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := inferencePods(ctx)
		return running(pods) == desiredReplicas, err
	})
	pool := map[string]string{"pool": model}
	if got := counter(t, metrics.NameGPULoanReturns, map[string]string{"pool": model, "outcome": metrics.ReturnOnTime}); got != 1 {
		t.Errorf("%s{outcome=on_time} = %v, want 1", metrics.NameGPULoanReturns, got)
	}
	if got := counter(t, metrics.NameGPULoanMissedReturns, pool); got != 0 {
		t.Errorf("%s = %v, want 0: no online pod waited for a GPU", metrics.NameGPULoanMissedReturns, got)
	}
	if got := counter(t, metrics.NameGPULoanOnlineWait, pool); got != 0 {
		t.Errorf("%s = %v, want 0", metrics.NameGPULoanOnlineWait, got)
	}
	pods, err := inferencePods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				t.Errorf("Inference pod %s waited for a GPU: %s", p.Name, c.Message)
			}
		}
	}

	// The window closes: KEDA's HPA scales the Deployment down, and the
	// job borrows again.
	within(t, "the job to resume on a new loan", time.Until(end)+2*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "train")
		return running(pods) == 2, err
	})
	s = loanState(t, "train")
	if s.Phase != gpuloan.PhaseLent || s.ResumedAt.Before(end) {
		t.Errorf("Loan state %+v, want Lent, resumed at the window's end %s or later", s, end)
	}
	j := &kubeflowv1.TFJob{}
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: offlineNS, Name: "train"}, j); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(j.Spec.RunPolicy.Suspend, false) || j.Annotations[colocation.GPULoanPausedAnnotation] != "" {
		t.Errorf("Resumed job: suspend %v, paused annotation %q; want neither", ptr.Deref(j.Spec.RunPolicy.Suspend, false), j.Annotations[colocation.GPULoanPausedAnnotation])
	}
	if c := lastCondition(j); c == nil || c.Type == kubeflowv1.JobFailed {
		t.Errorf("Resumed job's last condition %+v: the pause must not fail it", c)
	}
}

// A pool whose online workload has no schedule, no ScaledObject and no
// history is left to priority preemption: a TFJob on its free GPU is
// counted as lent, and never told to return.
func TestPoolWithoutForecastIsLeftAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := inference("l4-infer", 1)
	d.Annotations = nil
	d.Spec.Template.Spec.NodeSelector[colocation.GPUModelLabel] = unforecastModel
	d.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpus(1), Limits: gpus(1)}
	if err := apiServer.Client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	job := training("l4-train", 1)
	spec := &job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec
	spec.NodeSelector[colocation.GPUModelLabel] = unforecastModel
	spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpus(1), Limits: gpus(1)}
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	within(t, "the L4 training pod to run, counted as lent", time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "l4-train")
		lent := framework.RegistrySample(t, metrics.NameGPULoanLent, map[string]string{"pool": unforecastModel}).GetGauge().GetValue()
		return running(pods) == 1 && lent == 1, err
	})
	framework.Consistently(t, "a notice or a loan state on a job in a pool without forecast", 5*time.Second, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "l4-train")
		if err != nil {
			return false, err
		}
		j := &kubeflowv1.TFJob{}
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: offlineNS, Name: "l4-train"}, j); err != nil {
			return false, err
		}
		_, state := j.Annotations[gpuloan.LoanAnnotation]
		return state || len(pods) != 1 || pods[0].Annotations[colocation.StopReasonAnnotation] != "", nil
	})
}

// An unplanned spike: online work in a pool with a forecast rises while
// training holds every GPU, and its pod waits (it preempts nothing). The
// manager counts a missed return, stops the job at once (a late return:
// no notice worth the name) and pauses it, the online pod gets its GPUs,
// and the job does not borrow them back while online work holds them.
func TestUnplannedSpikeIsAMissedReturn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := inference("t4-infer", 0)
	// A window far from now makes the pool's forecast; the spike comes
	// outside it.
	far := time.Now().Add(12 * time.Hour).UTC()
	d.Annotations = map[string]string{tide.ScheduleAnnotation: fmt.Sprintf("UTC %d %d * * * - %d %d * * * = 1", far.Minute(), far.Hour(), (far.Minute()+1)%60, far.Add(time.Minute).Hour())}
	d.Spec.Template.Spec.NodeSelector[colocation.GPUModelLabel] = spikeModel
	d.Spec.Template.Spec.PriorityClassName = patientClass
	d.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpus(2), Limits: gpus(2)}
	if err := apiServer.Client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	job := training("t4-train", 1)
	spec := &job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec
	spec.NodeSelector[colocation.GPUModelLabel] = spikeModel
	spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpus(2), Limits: gpus(2)}
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	within(t, "the T4 training pod to run", time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "t4-train")
		return running(pods) == 1, err
	})

	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`))
	if err := apiServer.Client.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: onlineNS, Name: "t4-infer"}}, patch); err != nil {
		t.Fatal(err)
	}
	within(t, "the spike's pod to run on the GPUs the job gave back", time.Minute, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		err := apiServer.Client.List(ctx, &pods, client.InNamespace(onlineNS), client.MatchingLabels{"app": "t4-infer"})
		return running(pods.Items) == 1, err
	})
	pool := map[string]string{"pool": spikeModel}
	if got := counter(t, metrics.NameGPULoanMissedReturns, pool); got != 1 {
		t.Errorf("%s = %v, want 1", metrics.NameGPULoanMissedReturns, got)
	}
	if got := counter(t, metrics.NameGPULoanOnlineWait, pool); got <= 0 {
		t.Errorf("%s = %v, want the time the spike's pod waited", metrics.NameGPULoanOnlineWait, got)
	}
	if got := counter(t, metrics.NameGPULoanReturns, map[string]string{"pool": spikeModel, "outcome": metrics.ReturnLate}); got != 1 {
		t.Errorf("%s{outcome=late} = %v, want 1", metrics.NameGPULoanReturns, got)
	}
	if s := loanState(t, "t4-train"); s.Phase != gpuloan.PhasePaused || !s.Short {
		t.Errorf("Loan state %+v, want Paused after a short notice", s)
	}
	framework.Consistently(t, "the job borrowing the GPUs online work holds", 5*time.Second, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "t4-train")
		return len(pods) > 0, err
	})
}

// A new job that asks for lent GPUs while online work wants them back
// within seconds, sooner than the shortest loan (5 s) and a checkpoint's
// notice (10 s) allow, waits and says why; it creates no pod while the
// loan is short nor while online work holds the GPUs, and starts once the
// window that took them closes. Its template sets the GPUs as a limit
// only, as most TFJob YAML does.
func TestNewJobWaitsForALongEnoughLoan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The window opens at the first whole minute at least 70 s away; a
	// warm-up of all but 8 s of the time until then makes online work need
	// the GPUs 8 s from now.
	start := time.Now().Add(70 * time.Second).Truncate(time.Minute).Add(time.Minute).UTC()
	end := start.Add(time.Minute)
	need := time.Now().Add(8 * time.Second).Truncate(time.Second)
	d := inference("h100-infer", 0)
	d.Annotations = map[string]string{
		tide.ScheduleAnnotation: fmt.Sprintf("UTC %d %d * * * - %d %d * * * = 1", start.Minute(), start.Hour(), end.Minute(), end.Hour()),
		tide.WarmUpAnnotation:   start.Sub(need).String(),
	}
	d.Spec.Template.Spec.NodeSelector[colocation.GPUModelLabel] = gateModel
	d.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpus(2), Limits: gpus(2)}
	if err := apiServer.Client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	pool := map[string]string{"pool": gateModel}
	within(t, "the manager to lend the H100 GPUs only until online work needs them", 30*time.Second, func(context.Context) (bool, error) {
		until := framework.RegistrySample(t, metrics.NameGPULoanLendableUntil, pool).GetGauge().GetValue()
		return until > 0 && until <= float64(need.Unix()), nil
	})

	job := training("h100-train", 1)
	spec := &job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec
	spec.NodeSelector[colocation.GPUModelLabel] = gateModel
	spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: gpus(2)}
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	within(t, "the job to say it waits for a longer loan", 30*time.Second, func(ctx context.Context) (bool, error) {
		j := &kubeflowv1.TFJob{}
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: offlineNS, Name: "h100-train"}, j); err != nil {
			return false, err
		}
		for _, c := range j.Status.Conditions {
			if c.Type == kubeflowv1.JobCapacityPending && c.Reason == colocation.ReasonGPULoanTooShort {
				if !strings.Contains(c.Message, "pool "+gateModel) {
					return false, fmt.Errorf("CapacityPending says %q, want the pool named", c.Message)
				}
				return true, nil
			}
		}
		return false, nil
	})

	within(t, "the job to start once the window closed", time.Until(end)+time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "h100-train")
		return running(pods) == 1, err
	})
	pods, err := jobPods(ctx, "h100-train")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		// Creation times are whole seconds.
		if p.CreationTimestamp.Time.Before(end.Add(-time.Second)) {
			t.Errorf("Pod %s created at %s, before the window closed at %s: the job started on a loan too short", p.Name, p.CreationTimestamp.UTC(), end)
		}
	}
	j := &kubeflowv1.TFJob{}
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: offlineNS, Name: "h100-train"}, j); err != nil {
		t.Fatal(err)
	}
	for _, c := range j.Status.Conditions {
		if c.Type == kubeflowv1.JobCapacityPending {
			t.Errorf("Condition %+v once started: want CapacityPending gone", c)
		}
	}
}

// The inference Deployment's replicas outside and inside its window, and
// its warm-up (backfill.dev/gpu-warm-up): its GPUs must be back that much
// before the window.
const (
	minReplicas     = 1
	desiredReplicas = 3
	warmUp          = 10 * time.Second
)

// inferencePods are the inference Deployment's pods.
func inferencePods(ctx context.Context) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := apiServer.Client.List(ctx, &pods, client.InNamespace(onlineNS), client.MatchingLabels{"app": "infer"})
	return pods.Items, err
}

// inference is an online Deployment whose pods take a node's 4 GPUs each.
func inference(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	req := gpus(gpusPerNode)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: onlineNS, Name: name, Annotations: map[string]string{tide.WarmUpAnnotation: warmUp.String()}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{colocation.GPUModelLabel: model},
					Containers: []corev1.Container{{Name: "server", Image: "registry.invalid/infer:never-pulled",
						Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}},
				},
			},
		},
	}
}

// scaledObject scales the Deployment target to desiredReplicas from start
// to end each day, in UTC, and to minReplicas outside; its HPA scales down
// at once (no stabilization window), so that the window's close shows
// within the suite's time.
func scaledObject(target string, start, end time.Time) *unstructured.Unstructured {
	cron := func(t time.Time) string { return fmt.Sprintf("%d %d * * *", t.Minute(), t.Hour()) }
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1",
		"kind":       "ScaledObject",
		"metadata":   map[string]any{"namespace": onlineNS, "name": target},
		"spec": map[string]any{
			"scaleTargetRef":  map[string]any{"name": target},
			"pollingInterval": int64(2),
			"minReplicaCount": int64(minReplicas),
			"maxReplicaCount": int64(desiredReplicas),
			"advanced": map[string]any{
				"horizontalPodAutoscalerConfig": map[string]any{
					"behavior": map[string]any{
						"scaleDown": map[string]any{"stabilizationWindowSeconds": int64(0)},
					},
				},
			},
			"triggers": []any{map[string]any{
				"type": "cron",
				"metadata": map[string]any{
					"timezone": "UTC", "start": cron(start), "end": cron(end), "desiredReplicas": fmt.Sprint(desiredReplicas),
				},
			}},
		},
	}}
}

// training is a TFJob of workers taking a node's 4 GPUs each.
func training(name string, workers int32) *kubeflowv1.TFJob {
	req := gpus(gpusPerNode)
	return &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: offlineNS, Name: name},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {
				Replicas:      &workers,
				RestartPolicy: kubeflowv1.RestartPolicyNever,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					NodeSelector: map[string]string{colocation.GPUModelLabel: model},
					Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "registry.invalid/train:never-pulled",
						Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}},
				}},
			},
		}},
	}
}

// jobPods are the pods of a TFJob.
func jobPods(ctx context.Context, job string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := apiServer.Client.List(ctx, &pods, client.InNamespace(offlineNS), client.MatchingLabels{kubeflowv1.JobNameLabel: job})
	return pods.Items, err
}

// running counts the pods running and not being deleted.
func running(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// loanState is the job's GPU loan annotation.
func loanState(t *testing.T, job string) gpuloan.LoanState {
	t.Helper()
	j := &kubeflowv1.TFJob{}
	if err := apiServer.Client.Get(context.Background(), client.ObjectKey{Namespace: offlineNS, Name: job}, j); err != nil {
		t.Fatal(err)
	}
	s, ok, err := gpuloan.ReadLoanState(j.Annotations)
	if err != nil || !ok {
		t.Fatalf("TFJob %s: loan annotation %q: ok %v, %v", job, j.Annotations[gpuloan.LoanAnnotation], ok, err)
	}
	return s
}

// lastCondition is the job's state: its last condition.
func lastCondition(j *kubeflowv1.TFJob) *kubeflowv1.JobCondition {
	if n := len(j.Status.Conditions); n > 0 {
		return &j.Status.Conditions[n-1]
	}
	return nil
}

// within polls cond until it holds, failing the test after timeout: the
// framework's Eventually is for what happens at once, these wait for a
// schedule.
func within(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("Waiting %v for %s: %v", timeout, what, err)
	}
}

// counter is the value of a counter of the manager's registry (it runs in
// this process) with the given labels, 0 when it has none.
func counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return framework.RegistrySample(t, name, labels).GetCounter().GetValue()
}
