//go:build integration

package devcluster

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

// A replica's pod deleted and created again under its name, on a real
// apiserver and kwok serving logs, before the garbage collector took the
// old pod's Logs object: the new pod's log is its own, and its Logs
// object survives the collector.
func TestTrainingLogsOfARecreatedPodOnACluster(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	api, err := framework.StartAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Stop() })
	kubeconfig, err := api.AdminKubeconfig(dir, "kwok")
	if err != nil {
		t.Fatal(err)
	}
	sim, err := kwok.Start(kwok.Options{
		Binary: filepath.Join(framework.BinDir(), "kwok"), Kubeconfig: kubeconfig, StateDir: filepath.Join(dir, "kwok"), ServeLogs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Stop() })
	const ns, node = "logs", "cpu-0"
	if err := api.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := api.Client.Create(ctx, kwok.NodeObject(kwok.NodeSpec{Name: node, CPU: resource.MustParse("8"), Memory: resource.MustParse("16Gi")})); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(api.Env.Config)
	logs, err := newTrainingLogs(filepath.Join(dir, "pods"), dynamic.NewForConfigOrDie(api.Env.Config))
	if err != nil {
		t.Fatal(err)
	}

	first := runPod(t, cs, ns, node, "first life")
	logs.update(ctx, []corev1.Pod{*first}, time.Now())
	waitForLog(t, cs, ns, "first life")
	if err := cs.CoreV1().Pods(ns).Delete(ctx, first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the first pod to go", func() (bool, error) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, first.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	// The collector starts only now, so that the old pod's Logs object is
	// still there when the new pod's log starts, as when it lags.
	second := runPod(t, cs, ns, node, "second life")
	logs.update(ctx, []corev1.Pod{*second}, time.Now())
	sentinel := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owned-by-the-first-pod",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: first.Name, UID: first.UID}}}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, sentinel, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gc, err := api.StartControllerManager(dir, "garbage-collector-controller")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gc.Stop() })
	pollUntil(t, "the collector to take what the first pod owned", func() (bool, error) {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, sentinel.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	waitForLog(t, cs, ns, "second life")
	obj, err := logs.dynamic.Resource(kwok.LogsResource).Namespace(ns).Get(ctx, second.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the new pod's Logs object: %v", err)
	}
	if refs := obj.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != second.UID {
		t.Errorf("the Logs object is owned by %+v, want the new pod %s", refs, second.UID)
	}
}

// runPod creates the trainer pod on node and waits until kwok runs it.
func runPod(t *testing.T, cs kubernetes.Interface, ns, node, logText string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mnist-worker-0", Annotations: map[string]string{kwok.SimLogAnnotation: logText}},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "tensorflow", Image: "tensorflow/tensorflow:2.15.0"}}},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var running *corev1.Pod
	pollUntil(t, "pod "+pod.Name+" to run", func() (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		running = p
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	return running
}

// waitForLog polls the pod's log until it holds text.
func waitForLog(t *testing.T, cs kubernetes.Interface, ns, text string) {
	t.Helper()
	var got string
	pollUntil(t, "the log to say "+text, func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rc, err := cs.CoreV1().Pods(ns).GetLogs("mnist-worker-0", &corev1.PodLogOptions{Container: "tensorflow"}).Stream(ctx)
		if err != nil {
			got = err.Error()
			return false, nil
		}
		defer func() { _ = rc.Close() }()
		data, _ := io.ReadAll(rc)
		got = string(data)
		return strings.Contains(got, text), nil
	})
	if strings.Contains(got, "first life") && text != "first life" {
		t.Errorf("the new pod's log holds the old pod's lines:\n%s", got)
	}
}

func pollUntil(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, framework.Timeout, true, func(context.Context) (bool, error) {
		return cond()
	}); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
