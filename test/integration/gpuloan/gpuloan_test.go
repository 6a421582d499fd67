//go:build integration

package gpuloan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// A night's loan: the morning window of a KEDA ScaledObject opens within a
// minute and needs every GPU of the pool; a TFJob holds them all. The job
// is told a checkpoint's time before the window, pauses (not fails) at
// the window's start, the morning's pods find their GPUs free, and the
// job resumes once the window closes.
func TestLoanReturnedBeforeTheMorning(t *testing.T) {
	ctx := context.Background()
	// The window opens at the first whole minute at least 30 s away (the
	// training pods start and run meanwhile) and lasts a minute.
	start := time.Now().Add(30 * time.Second).Truncate(time.Minute).Add(time.Minute).UTC()
	end := start.Add(time.Minute)
	const replicas = 2 // of 4 GPUs each: the whole pool
	deploy := inference("infer", 0)
	if err := apiServer.Client.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Client.Create(ctx, scaledObject("infer", start, end, replicas)); err != nil {
		t.Fatal(err)
	}
	job := training("train", 2)
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	within(t, "the training pods to run on the pool's 8 GPUs", time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "train")
		return running(pods) == 2, err
	})

	within(t, "the training pods' stop notice", time.Until(start)+30*time.Second, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, "train")
		noticed := 0
		for _, p := range pods {
			if p.Annotations[colocation.StopReasonAnnotation] == colocation.ReasonGPUsReturnedToOnline {
				noticed++
				if at := p.Annotations[colocation.StopAtAnnotation]; at != start.Format(time.RFC3339) {
					return false, fmt.Errorf("pod %s must stop at %s, the window's start; its notice says %s", p.Name, start.Format(time.RFC3339), at)
				}
			}
		}
		return noticed == 2, err
	})
	s := loanState(t, "train")
	if s.Phase != gpuloan.PhaseReturning && s.Phase != gpuloan.PhasePaused {
		t.Fatalf("Loan state %+v, want Returning or Paused", s)
	}
	if !s.NoticeAt.Before(s.Deadline) || !s.Deadline.Equal(start) || s.Short {
		t.Errorf("Loan state %+v: want a notice of the whole checkpoint time before the deadline %s", s, start)
	}

	within(t, "the job to pause and its pods to go", time.Until(start)+30*time.Second, func(ctx context.Context) (bool, error) {
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

	// The morning: KEDA's HPA scales the Deployment up.
	scale(t, "infer", replicas)
	within(t, "the morning's pods to run on the GPUs the job returned", time.Minute, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		err := apiServer.Client.List(ctx, &pods, client.InNamespace(onlineNS), client.MatchingLabels{"app": "infer"})
		return running(pods.Items) == replicas, err
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

	// The evening: the window closes and KEDA scales the Deployment down.
	scale(t, "infer", 0)
	within(t, "the job to resume on a new loan", time.Until(end)+time.Minute, func(ctx context.Context) (bool, error) {
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

// inference is an online Deployment whose pods take a node's 4 GPUs each.
func inference(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	req := gpus(gpusPerNode)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: onlineNS, Name: name},
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

// scaledObject scales the Deployment target to replicas from start to end
// each day, in UTC, and to none outside.
func scaledObject(target string, start, end time.Time, replicas int) *unstructured.Unstructured {
	cron := func(t time.Time) string { return fmt.Sprintf("%d %d * * *", t.Minute(), t.Hour()) }
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1",
		"kind":       "ScaledObject",
		"metadata":   map[string]any{"namespace": onlineNS, "name": target},
		"spec": map[string]any{
			"scaleTargetRef":  map[string]any{"name": target},
			"minReplicaCount": int64(0),
			"triggers": []any{map[string]any{
				"type": "cron",
				"metadata": map[string]any{
					"timezone": "UTC", "start": cron(start), "end": cron(end), "desiredReplicas": fmt.Sprint(replicas),
				},
			}},
		},
	}}
	return u
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

// scale sets the Deployment's replicas, as KEDA's HPA does.
func scale(t *testing.T, name string, replicas int32) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": replicas}})
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: onlineNS, Name: name}}
	if err := apiServer.Client.Patch(context.Background(), d, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
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
	return sample(t, name, labels).GetCounter().GetValue()
}

// sample is the first series of a metric of the manager's registry with
// the given labels; nil when there is none.
func sample(t *testing.T, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue series
				}
			}
			return m
		}
	}
	return nil
}
