package devcluster

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

func trainingPod(rtype string, phase corev1.PodPhase, annotations map[string]string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mnist-" + rtype + "-0", UID: types.UID("uid-mnist-" + rtype + "-0"), Annotations: annotations,
			Labels: map[string]string{kubeflowv1.ReplicaTypeLabel: rtype, kubeflowv1.ReplicaIndexLabel: "0"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Env: []corev1.EnvVar{{
			Name: "TF_CONFIG", Value: `{"cluster":{"ps":["a"],"worker":["b","c"]},"task":{"type":"` + rtype + `","index":0}}`,
		}}}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

// logLines is the text of a log file without its timestamps and streams.
func logLines(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		fields := strings.SplitN(line, " ", 4)
		if len(fields) != 4 || fields[1] != "stdout" || fields[2] != "F" {
			t.Fatalf("line %q is not in the kubelet's log format", line)
		}
		lines = append(lines, fields[3])
	}
	return lines
}

func TestTrainingLogs(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{kwok.LogsResource: "LogsList"})
	logs, err := newTrainingLogs(t.TempDir(), dyn)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	worker := trainingPod("worker", corev1.PodRunning, map[string]string{kwok.SimLogAnnotation: "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\nsecond line"})
	ps := trainingPod("ps", corev1.PodRunning, nil)
	pending := trainingPod("chief", corev1.PodPending, nil)
	pods := []corev1.Pod{worker, ps, pending}

	logs.update(ctx, pods, start)
	logs.update(ctx, pods, start.Add(stepEvery))
	logs.update(ctx, pods, start.Add(stepEvery+time.Second)) // no step due yet

	startUp := func(task string) []string {
		return []string{
			"I tensorflow/core/platform/cpu_feature_guard.cc:210] This TensorFlow binary is optimized to use available CPU instructions.",
			"I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:457] Started server with target: grpc://mnist-" + strings.Split(task, ":")[0] + "-0 (task " + task + "; cluster ps=1 worker=2)",
		}
	}
	want := map[string][]string{
		"mnist-worker-0": append(startUp("worker:0"), "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", "second line", "step 100: loss = 2.2378"),
		"mnist-ps-0":     startUp("ps:0"),
	}
	got := map[string][]string{}
	list, err := dyn.Resource(kwok.LogsResource).Namespace("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range list.Items {
		if owner := obj.GetOwnerReferences(); len(owner) != 1 || owner[0].Kind != "Pod" || owner[0].Name != obj.GetName() {
			t.Errorf("Logs %s is owned by %+v, want its pod", obj.GetName(), owner)
		}
		got[obj.GetName()] = logLines(t, logsFileOf(obj.Object))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod logs (-want +got):\n%s", diff)
	}

	files := make([]string, 0, len(logs.pods))
	for _, log := range logs.pods {
		files = append(files, log.file)
	}
	logs.update(ctx, nil, start.Add(time.Minute))
	if len(logs.pods) != 0 {
		t.Errorf("the logs of gone pods are still tracked: %v", logs.pods)
	}
	for _, file := range files {
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			t.Errorf("the log file %s of a gone pod is still there (stat: %v)", file, err)
		}
	}
}

// A pod deleted and created again under its name (a restarted replica)
// finds the Logs object of the old pod still there until the garbage
// collector takes it: the new pod's object replaces it, owned by the new
// pod and naming its file.
func TestTrainingLogsOfARecreatedPod(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{kwok.LogsResource: "LogsList"})
	logs, err := newTrainingLogs(t.TempDir(), dyn)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := trainingPod("worker", corev1.PodRunning, nil)
	logs.update(ctx, []corev1.Pod{old}, start)
	oldFile := logs.pods[old.UID].file

	recreated := trainingPod("worker", corev1.PodRunning, map[string]string{kwok.SimLogAnnotation: "second life"})
	recreated.UID = "uid-mnist-worker-0-again"
	logs.update(ctx, []corev1.Pod{recreated}, start.Add(time.Minute))

	list, err := dyn.Resource(kwok.LogsResource).Namespace("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type logsObject struct{ Name, OwnerUID, File string }
	var got []logsObject
	for _, obj := range list.Items {
		for _, ref := range obj.GetOwnerReferences() {
			got = append(got, logsObject{obj.GetName(), string(ref.UID), logsFileOf(obj.Object)})
		}
	}
	want := []logsObject{{"mnist-worker-0", "uid-mnist-worker-0-again", logs.pods[recreated.UID].file}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Logs objects (-want +got):\n%s", diff)
	}
	if lines := logLines(t, want[0].File); len(lines) == 0 || lines[len(lines)-1] != "second life" {
		t.Errorf("the Logs object names a file of lines %q, want the new pod's", lines)
	}
	if _, err := os.Stat(oldFile); !os.IsNotExist(err) {
		t.Errorf("the old pod's log file %s is still there (stat: %v)", oldFile, err)
	}
}

// logsFileOf is the file a Logs object names for every container.
func logsFileOf(obj map[string]any) string {
	spec, _ := obj["spec"].(map[string]any)
	entries, _ := spec["logs"].([]any)
	if len(entries) != 1 {
		return ""
	}
	file, _ := entries[0].(map[string]any)["logsFile"].(string)
	return file
}
