//go:build integration

package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// gpuNode is the suite's one node: two GPUs, no kubelet, so pods bound to
// it stay Pending; the scheduler places pods on it all the same.
const gpuNode = "cli-gpu-node"

func ensureGPUNode(t *testing.T) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: gpuNode, Labels: map[string]string{corev1.LabelHostname: gpuNode}}}
	if err := apiServer.Client.Create(context.Background(), node); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	// The apiserver taints a new node not-ready until its kubelet reports;
	// there is no kubelet here.
	if err := apiServer.Client.Get(context.Background(), client.ObjectKeyFromObject(node), node); err != nil {
		t.Fatal(err)
	}
	node.Spec.Taints = nil
	if err := apiServer.Client.Update(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	node.Status.Capacity = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("2"),
	}
	node.Status.Allocatable = node.Status.Capacity
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
	if err := apiServer.Client.Status().Update(context.Background(), node); err != nil {
		t.Fatal(err)
	}
}

// createJobWithPod creates a TFJob of one worker asking for gpus GPUs and,
// as the operator would, its pod.
func createJobWithPod(t *testing.T, ns, name string, gpus int64) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	requests := corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
	container := corev1.Container{Name: "tensorflow", Image: "tensorflow/tensorflow:2.15.0", Resources: corev1.ResourceRequirements{Requests: requests, Limits: requests}}
	job := &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {Replicas: ptr.To[int32](1), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}},
		}},
	}
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-worker-0", Labels: map[string]string{
			kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName, kubeflowv1.JobNameLabel: name,
			kubeflowv1.ReplicaTypeLabel: "worker", kubeflowv1.ReplicaIndexLabel: "0", kubeflowv1.JobRoleLabel: kubeflowv1.JobRoleMaster,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{container}, RestartPolicy: corev1.RestartPolicyNever},
	}
	if err := apiServer.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// describe reads as the scheduler found it: a pod wanting more GPUs than
// the node has is explained in words, the scheduler's event listed.
func TestDescribeSaysWhyAPodWaits(t *testing.T) {
	ensureGPUNode(t)
	ns := newNamespace(t)
	pod := createJobWithPod(t, ns, "greedy", 4)
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the scheduler never found %s unschedulable: %+v", pod.Name, pod.Status)
	}

	var r result
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, framework.Timeout, true, func(context.Context) (bool, error) {
		r = cli(t, "", "describe", "greedy", "-n", ns)
		return r.code == 0 && strings.Contains(r.stdout, "FailedScheduling"), nil
	})
	if err != nil {
		t.Fatalf("describe never showed the scheduler's event (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"Name:            greedy",
		"worker-0 (greedy-worker-0): waiting for GPUs: 0/1 nodes have 4 free nvidia.com/gpu (1 with too little nvidia.com/gpu)",
		"  <unscheduled>:  worker-0",
		"default-scheduler  pod/greedy-worker-0",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe does not say %q:\n%s", want, r.stdout)
		}
	}
}

func TestGetListsAndRefuses(t *testing.T) {
	ensureGPUNode(t)
	ns := newNamespace(t)

	empty := cli(t, "", "get", "-n", ns)
	empty.wantSuccess(t)
	if empty.stdout != "" || empty.stderr != "No resources found in "+ns+" namespace.\n" {
		t.Errorf("get on an empty namespace: stdout %q, stderr %q", empty.stdout, empty.stderr)
	}

	createJobWithPod(t, ns, "small", 1)
	table := cli(t, "", "get", "-n", ns)
	table.wantSuccess(t)
	lines := strings.Split(strings.TrimSpace(table.stdout), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME STATE REPLICAS RESTARTS DISRUPTIONS CHECKPOINT AGE WAITING" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "small Pending 0/1 0 0 <none> ") {
		t.Errorf("get printed:\n%s", table.stdout)
	}

	all := cli(t, "", "get", "-A", "-o", "wide")
	all.wantSuccess(t)
	if !strings.HasPrefix(all.stdout, "NAMESPACE") || !strings.Contains(all.stdout, ns) || !strings.Contains(all.stdout, "Worker:0/1") {
		t.Errorf("get -A -o wide printed:\n%s", all.stdout)
	}

	names := cli(t, "", "get", "-n", ns, "-o", "name")
	names.wantSuccess(t)
	if names.stdout != "tfjob.kubeflow.org/small\n" {
		t.Errorf("get -o name printed %q", names.stdout)
	}

	yaml := cli(t, "", "get", "small", "-n", ns, "-o", "yaml")
	yaml.wantSuccess(t)
	if !strings.HasPrefix(yaml.stdout, "apiVersion: kubeflow.org/v1\nkind: TFJob\n") || strings.Contains(yaml.stdout, "managedFields") {
		t.Errorf("get -o yaml printed:\n%s", yaml.stdout)
	}

	// The resource first, kubectl's way: tfjobs is no job's name.
	typed := cli(t, "", "get", "tfjobs", "-A", "-o", "name")
	typed.wantSuccess(t)
	if !strings.Contains(typed.stdout, "tfjob.kubeflow.org/small\n") {
		t.Errorf("get tfjobs -A -o name printed %q", typed.stdout)
	}
	byKind := cli(t, "", "get", "tfjob/small", "-n", ns, "-o", "name")
	byKind.wantSuccess(t)
	if byKind.stdout != "tfjob.kubeflow.org/small\n" {
		t.Errorf("get tfjob/small -o name printed %q", byKind.stdout)
	}
	cli(t, "", "get", "pods/small", "-n", ns).wantFailure(t, 2, `"pods/small": get takes TFJobs only`)

	cli(t, "", "get", "nope", "-n", ns).wantFailure(t, 1, `TFJob "nope" not found in namespace `+ns)
	cli(t, "", "get", "-o", "table", "-n", ns).wantFailure(t, 2, `unknown output format "table"`)
	cli(t, "", "get", "small", "-A").wantFailure(t, 2, "cannot be retrieved by name across all namespaces")
}

func TestDescribeAndLogsRefuse(t *testing.T) {
	ns := newNamespace(t)
	cli(t, "", "describe", "-n", ns).wantFailure(t, 2, "describe takes a TFJob name, or a kind and a name")
	cli(t, "", "describe", "pod", "x", "-n", ns).wantFailure(t, 2, `unknown kind "pod" (want tfjob or node)`)
	cli(t, "", "describe", "node", "ghost").wantFailure(t, 1, `node "ghost" not found`)
	cli(t, "", "describe", "ghost", "-n", ns).wantFailure(t, 1, `TFJob "ghost" not found in namespace `+ns)
	cli(t, "", "logs", "ghost", "-n", ns).wantFailure(t, 1, `TFJob "ghost" not found`)

	ensureGPUNode(t)
	createJobWithPod(t, ns, "one", 1)
	cli(t, "", "logs", "one", "--replica", "worker-3", "-n", ns).wantFailure(t, 2, `TFJob one has no replica "worker-3": use --replica with one of worker-0`)
	cli(t, "", "logs", "one", "--replica", "worker-0", "--all-replicas", "-n", ns).wantFailure(t, 2, "exclude each other")
	cli(t, "", "logs", "one", "--tail", "-5", "-n", ns).wantFailure(t, 2, "--tail -5")
}
