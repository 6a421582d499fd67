//go:build integration

package report

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/backfill-dev/backfill/internal/report"
	"github.com/backfill-dev/backfill/test/framework"
)

// managerPod is the pod the suite's manager believes it runs in
// (POD_NAMESPACE and POD_NAME, as the chart's downward API sets them).
var managerPod = types.NamespacedName{Namespace: "backfill-system", Name: "backfill-manager-0"}

func createManagerPod() error {
	ctx := context.Background()
	if err := apiServer.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerPod.Namespace}}); err != nil {
		return err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: managerPod.Namespace, Name: managerPod.Name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "backfill"}}},
	}
	if err := apiServer.Client.Create(ctx, pod); err != nil {
		return err
	}
	if err := os.Setenv("POD_NAMESPACE", managerPod.Namespace); err != nil {
		return err
	}
	return os.Setenv("POD_NAME", managerPod.Name)
}

// The leading manager labels its pod for the reports Service to select.
func TestLeaderLabelsItsPod(t *testing.T) {
	framework.Eventually(t, "the manager's pod labelled "+report.LeaderLabel, func(ctx context.Context) (bool, error) {
		pod := &corev1.Pod{}
		err := apiServer.Client.Get(ctx, managerPod, pod)
		return err == nil && pod.Labels[report.LeaderLabel] == "true", err
	})
}

// A manager that starts clears the label its pod kept from an earlier
// run of its container, which may have led.
func TestStartClearsAnOldLabel(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restarted", Labels: map[string]string{report.LeaderLabel: "true", "keep": "me"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "backfill"}}},
	}
	if err := apiServer.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	label := report.NewLeaderPodLabel(apiServer.Client, types.NamespacedName{Namespace: ns, Name: pod.Name}, ctrl.Log)
	if err := label.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: pod.Name}, pod); err != nil {
		t.Fatal(err)
	}
	if _, ok := pod.Labels[report.LeaderLabel]; ok || pod.Labels["keep"] != "me" {
		t.Errorf("labels after Clear: %v, want %s gone and the others kept", pod.Labels, report.LeaderLabel)
	}
}
