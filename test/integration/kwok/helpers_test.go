//go:build integration

package kwok

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/test/framework"
)

// pollInterval is how often the suite looks again; waits are bounded by
// framework.Timeout.
const pollInterval = 100 * time.Millisecond

// podBuilder makes the suite's pods: one container, restartPolicy Never
// (as the operator's training pods), no tolerations.
type podBuilder struct{ pod *corev1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:  "tensorflow",
				Image: "registry.invalid/backfill/trainer:never-pulled",
			}},
		},
	}}
}

func (b *podBuilder) GPUs(n int64) *podBuilder {
	q := *resource.NewQuantity(n, resource.DecimalSI)
	b.pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{"nvidia.com/gpu": q},
		Limits:   corev1.ResourceList{"nvidia.com/gpu": q},
	}
	return b
}

func (b *podBuilder) Annotation(key, value string) *podBuilder {
	if b.pod.Annotations == nil {
		b.pod.Annotations = map[string]string{}
	}
	b.pod.Annotations[key] = value
	return b
}

func (b *podBuilder) Finalizer(f string) *podBuilder {
	b.pod.Finalizers = append(b.pod.Finalizers, f)
	return b
}

func (b *podBuilder) OnNode(node string) *podBuilder {
	b.pod.Spec.NodeSelector = map[string]string{corev1.LabelHostname: node}
	return b
}

// Create creates the pod; the suite's namespace is shared, so every test
// names its pods after itself.
func (b *podBuilder) Create(t *testing.T) *corev1.Pod {
	t.Helper()
	if err := apiServer.Client.Create(context.Background(), b.pod); err != nil {
		t.Fatalf("Creating pod %s: %v", b.pod.Name, err)
	}
	return b.pod
}

// waitFor polls obj (by its name) until cond holds, failing the test with
// what was last seen after framework.Timeout.
func waitFor[T client.Object](t *testing.T, obj T, what string, cond func(T) bool) T {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), pollInterval, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		err := apiServer.Client.Get(ctx, key, obj)
		if ctx.Err() == nil { // keep the last real answer, not the deadline's
			lastErr = err
		}
		return err == nil && cond(obj), nil
	})
	if err != nil {
		t.Fatalf("%s %s never became %s (last error %v); last seen:\n%s", typeName(obj), key, what, lastErr, describe(obj))
	}
	return obj
}

func waitForPod(t *testing.T, pod *corev1.Pod, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	return waitFor(t, pod.DeepCopy(), what, cond)
}

func podPhaseIs(phase corev1.PodPhase) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { return p.Status.Phase == phase }
}

// terminated is the single container's terminated state, or nil.
func terminated(p *corev1.Pod) *corev1.ContainerStateTerminated {
	if len(p.Status.ContainerStatuses) != 1 {
		return nil
	}
	return p.Status.ContainerStatuses[0].State.Terminated
}

func typeName(obj client.Object) string { return fmt.Sprintf("%T", obj) }

func describe(obj client.Object) string {
	switch o := obj.(type) {
	case *corev1.Pod:
		return fmt.Sprintf("phase=%s node=%q deletion=%v finalizers=%v conditions=%+v containers=%+v",
			o.Status.Phase, o.Spec.NodeName, o.DeletionTimestamp, o.Finalizers, o.Status.Conditions, o.Status.ContainerStatuses)
	case *corev1.Node:
		return fmt.Sprintf("conditions=%+v capacity=%v allocatable=%v addresses=%v", o.Status.Conditions, o.Status.Capacity, o.Status.Allocatable, o.Status.Addresses)
	}
	return fmt.Sprintf("%+v", obj)
}
