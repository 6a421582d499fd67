//go:build integration

package keda

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/test/framework"
)

const (
	// scaleTimeout bounds the wait for KEDA to create the HPA and the HPA
	// controller to act on KEDA's metric: a few of its 2 s syncs, plus
	// KEDA reconciling the ScaledObject.
	scaleTimeout = 2 * time.Minute
	// minReplicas and desiredReplicas are the ScaledObjects'
	// minReplicaCount and the cron trigger's desiredReplicas.
	minReplicas     = 1
	desiredReplicas = 3
)

// A cron window that opened a minute ago: the HPA KEDA made scales the
// Deployment from minReplicaCount to desiredReplicas.
func TestOpenCronWindowScalesToDesiredReplicas(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "keda-open")
	now := time.Now().UTC()
	createDeployment(t, ns, "inference", minReplicas)
	createScaledObject(t, ns, "inference", cronAt(now.Add(-time.Minute)), cronAt(now.Add(30*time.Minute)))

	waitReplicas(t, ns, "inference", desiredReplicas)
	checkScaledByHPA(t, ns, "inference")
}

// A cron window that opens in two hours: the Deployment, started above
// minReplicaCount, comes down to it through the HPA and stays there.
func TestClosedCronWindowKeepsMinReplicas(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "keda-closed")
	now := time.Now().UTC()
	createDeployment(t, ns, "inference", minReplicas+1)
	createScaledObject(t, ns, "inference", cronAt(now.Add(2*time.Hour)), cronAt(now.Add(3*time.Hour)))

	waitReplicas(t, ns, "inference", minReplicas)
	checkScaledByHPA(t, ns, "inference")
	// Several HPA syncs, each of which would have scaled up on an open
	// window's metric.
	framework.Consistently(t, "the Deployment leaving minReplicaCount", 10*time.Second, func(ctx context.Context) (bool, error) {
		replicas, err := specReplicas(ctx, ns, "inference")
		return replicas != minReplicas, err
	})
}

// cronAt is a daily cron schedule (minute hour) at t's minute, in UTC.
func cronAt(t time.Time) string {
	return fmt.Sprintf("%d %d * * *", t.Minute(), t.Hour())
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), framework.Timeout)
	defer cancel()
	if err := apiServer.CreateNamespace(ctx, name); err != nil {
		t.Fatalf("Creating namespace %s: %v", name, err)
	}
	return name
}

func createDeployment(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "inference:test"}}},
			},
		},
	}
	if err := apiServer.Client.Create(context.Background(), d); err != nil {
		t.Fatalf("Creating Deployment %s/%s: %v", ns, name, err)
	}
}

// createScaledObject scales Deployment name with one cron trigger, in UTC,
// from start to end. Its HPA scales down at once (no stabilization window),
// so that a closed window shows within the suite's time.
func createScaledObject(t *testing.T, ns, name, start, end string) {
	t.Helper()
	so := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1",
		"kind":       "ScaledObject",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"scaleTargetRef":  map[string]any{"name": name},
			"pollingInterval": int64(5),
			"minReplicaCount": int64(minReplicas),
			"maxReplicaCount": int64(5),
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
					"timezone":        "UTC",
					"start":           start,
					"end":             end,
					"desiredReplicas": fmt.Sprint(desiredReplicas),
				},
			}},
		},
	}}
	if err := apiServer.Client.Create(context.Background(), so); err != nil {
		t.Fatalf("Creating ScaledObject %s/%s (cron %q to %q): %v", ns, name, start, end, err)
	}
}

func specReplicas(ctx context.Context, ns, name string) (int32, error) {
	var d appsv1.Deployment
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
		return 0, err
	}
	return ptr.Deref(d.Spec.Replicas, 1), nil
}

// waitReplicas waits until the Deployment's spec.replicas is want, and
// reports what KEDA's HPA said when it is not.
func waitReplicas(t *testing.T, ns, name string, want int32) {
	t.Helper()
	got := "not read"
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, scaleTimeout, true, func(ctx context.Context) (bool, error) {
		replicas, err := specReplicas(ctx, ns, name)
		if err != nil {
			return false, err
		}
		got = fmt.Sprint(replicas)
		return replicas == want, nil
	})
	if err != nil {
		t.Fatalf("Deployment %s/%s has %s replicas, want %d (%v); its HPA: %s", ns, name, got, want, err, describeHPA(ns, name))
	}
}

// hpaName is the HPA KEDA makes for ScaledObject name.
func hpaName(name string) string { return "keda-hpa-" + name }

// checkScaledByHPA checks that KEDA's HPA targets the Deployment with an
// external metric, and that the last scale was kube-controller-manager's
// (the HPA controller), through the scale subresource.
func checkScaledByHPA(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	var hpa autoscalingv2.HorizontalPodAutoscaler
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hpaName(name)}, &hpa); err != nil {
		t.Fatalf("KEDA's HPA for ScaledObject %s/%s: %v", ns, name, err)
	}
	if ref := hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != name {
		t.Errorf("HPA %s targets %s %s, want Deployment %s", hpa.Name, ref.Kind, ref.Name, name)
	}
	if len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Type != autoscalingv2.ExternalMetricSourceType {
		t.Errorf("HPA %s metrics %+v, want one external metric (KEDA's cron trigger)", hpa.Name, hpa.Spec.Metrics)
	}
	if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != minReplicas {
		t.Errorf("HPA %s minReplicas %v, want %d", hpa.Name, hpa.Spec.MinReplicas, minReplicas)
	}
	var d appsv1.Deployment
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
		t.Fatal(err)
	}
	for _, f := range d.ManagedFields {
		if f.Subresource == "scale" && f.Manager == "kube-controller-manager" {
			return
		}
	}
	var managers []string
	for _, f := range d.ManagedFields {
		managers = append(managers, fmt.Sprintf("%s (%s, subresource %q)", f.Manager, f.Operation, f.Subresource))
	}
	t.Errorf("Deployment %s/%s was not scaled by the HPA controller through its scale subresource; its field managers: %v", ns, name, managers)
}

// describeHPA is the HPA's status and conditions, for failure messages.
func describeHPA(ns, name string) string {
	var hpa autoscalingv2.HorizontalPodAutoscaler
	if err := apiServer.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: hpaName(name)}, &hpa); err != nil {
		return err.Error()
	}
	s := fmt.Sprintf("current %d, desired %d", hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas)
	for _, c := range hpa.Status.Conditions {
		s += fmt.Sprintf("; %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	return s
}
