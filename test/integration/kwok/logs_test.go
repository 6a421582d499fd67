//go:build integration

package kwok

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

// The apiserver serves a simulated pod's log the way it reads a kubelet's:
// from the node's kubelet endpoint, which is kwok, from the file the pod's
// Logs object names.
func TestPodLogsComeFromTheLogsObject(t *testing.T) {
	pod := waitForPod(t, makePod("with-logs").OnNode(cpuNode).Create(t), "Running", podPhaseIs(corev1.PodRunning))
	file := filepath.Join(t.TempDir(), "with-logs.log")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.WriteFile(file, []byte(simkwok.LogLine(at, "first line")+simkwok.LogLine(at, "CUDA_ERROR_NO_DEVICE")), 0o644); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(apiServer.Env.Config)
	logs := simkwok.LogsObject(namespace, pod.Name, string(pod.UID), file)
	if _, err := dyn.Resource(simkwok.LogsResource).Namespace(namespace).Create(context.Background(), logs, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the Logs object: %v", err)
	}

	cs := kubernetes.NewForConfigOrDie(apiServer.Env.Config)
	for name, tc := range map[string]struct {
		opts corev1.PodLogOptions
		want string
	}{
		"whole log": {opts: corev1.PodLogOptions{Container: "tensorflow"}, want: "first line\nCUDA_ERROR_NO_DEVICE\n"},
		"tail":      {opts: corev1.PodLogOptions{Container: "tensorflow", TailLines: ptr.To[int64](1)}, want: "CUDA_ERROR_NO_DEVICE\n"},
		"previous":  {opts: corev1.PodLogOptions{Container: "tensorflow", Previous: true}, want: "first line\nCUDA_ERROR_NO_DEVICE\n"},
	} {
		t.Run(name, func(t *testing.T) {
			// kwok learns of the Logs object through its watch: poll.
			var got string
			var lastErr error
			err := wait.PollUntilContextTimeout(context.Background(), pollInterval, framework.Timeout, true, func(context.Context) (bool, error) {
				got, lastErr = readLog(cs, pod.Name, &tc.opts)
				return lastErr == nil && got == tc.want, nil
			})
			if err == nil {
				return
			}
			t.Fatalf("log = %q (last error %v), want %q", got, lastErr, tc.want)
		})
	}
}

func readLog(cs kubernetes.Interface, pod string, opts *corev1.PodLogOptions) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := cs.CoreV1().Pods(namespace).GetLogs(pod, opts).Stream(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = rc.Close() }()
	data, err := io.ReadAll(rc)
	return string(data), err
}
