package gpuloan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// A ScaledObject whose only cron trigger is unreadable has a problem, and
// the forecast says it rather than passing over it in silence.
func TestScaledObjectProblem(t *testing.T) {
	cron := func(start, desired string) any {
		return map[string]any{"type": "cron", "metadata": map[string]any{"timezone": "Europe/Berlin", "start": start, "end": "0 22 * * *", "desiredReplicas": desired}}
	}
	so := func(name, target string, triggers ...any) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
			"metadata": map[string]any{"namespace": "online", "name": name},
			"spec":     map[string]any{"scaleTargetRef": map[string]any{"name": target}, "triggers": triggers}}}
	}
	byTarget := ScaledObjectsOf([]unstructured.Unstructured{
		so("fine", "a", cron("0 7 * * *", "8")),
		so("bad-replicas", "b", cron("0 7 * * *", "eight")),
		so("bad-start", "c", cron("0 7 * *", "8")),
		so("no-cron", "d", map[string]any{"type": "prometheus"}),
	})
	for target, want := range map[string]string{
		"Deployment/online/a": "",
		"Deployment/online/b": `KEDA ScaledObject online/bad-replicas: trigger 1: desiredReplicas "eight" is not a whole number`,
		"Deployment/online/c": "KEDA ScaledObject online/bad-start: trigger 1:",
		"Deployment/online/d": "",
	} {
		s, ok := byTarget[target]
		if !ok {
			t.Fatalf("no ScaledObject for %s", target)
		}
		err := s.Problem()
		if (err == nil) != (want == "") || (err != nil && !strings.HasPrefix(err.Error(), want)) {
			t.Errorf("%s: Problem() = %v, want %q", s.Name(), err, want)
		}
		w := GPUWorkload{w: workload{kind: kindDeployment, namespace: "online", name: strings.TrimPrefix(target, "Deployment/online/"), replicas: 1}}
		source, problem := ForecastSourceOf(w, &s, nil)
		if (problem != nil) != (err != nil) {
			t.Errorf("%s: ForecastSourceOf problem %v, want the ScaledObject's %v", s.Name(), problem, err)
		}
		if wantSource := map[bool]string{true: SourceKEDA, false: SourceNone}[s.Name() == "online/fine"]; source != wantSource {
			t.Errorf("%s: source %s, want %s", s.Name(), source, wantSource)
		}
	}
}

// The loans on a node are its running offline TFJob pods' GPUs by job,
// Kueue's jobs and online pods aside, each with its job's loan state.
func TestLoansOnNode(t *testing.T) {
	pod := func(name, job string, gpus int64, mutate func(*corev1.Pod)) corev1.Pod {
		req := corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec:   corev1.PodSpec{PriorityClassName: "backfill-offline", Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		if job != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind, Name: job, Controller: ptr.To(true)}}
		}
		if mutate != nil {
			mutate(&p)
		}
		return p
	}
	returning := LoanState{Phase: PhaseReturning, Pool: "A100", GPUs: 3, Deadline: t0}
	jobs := map[string]*kubeflowv1.TFJob{
		"ns/train":  {ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", Annotations: map[string]string{LoanAnnotation: returning.annotation()}}},
		"ns/queued": {ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "queued", Labels: map[string]string{queueing.QueueNameLabel: "q"}}},
	}
	pods := []corev1.Pod{
		pod("train-worker-0", "train", 2, nil),
		pod("train-worker-1", "train", 1, nil),
		pod("train-worker-2", "train", 1, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }),
		pod("train-worker-3", "train", 1, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
		pod("queued-worker-0", "queued", 2, nil),
		pod("other-worker-0", "other", 1, nil),
		pod("cpu-worker-0", "cpu", 0, nil),
		pod("infer-0", "", 2, func(p *corev1.Pod) { p.Spec.PriorityClassName = "" }),
	}
	got := LoansOnNode(pods, jobs, "backfill-offline")
	want := []NodeLoan{{Job: "ns/other", GPUs: 1}, {Job: "ns/train", GPUs: 3, State: returning}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoansOnNode (-want +got):\n%s", diff)
	}
}
