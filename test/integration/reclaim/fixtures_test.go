//go:build integration

package reclaim

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/reclaim"
	"github.com/backfill-dev/backfill/test/framework"
)

const (
	onlineNS  = "online"
	offlineNS = "ml"
	// onlinePerNode online pods of 4 CPU and 8Gi request each node whole.
	onlinePerNode = 4
	// nodeMilliCPU is each node's CPU, in millicores.
	nodeMilliCPU = 16000
)

// createFixtures makes the nodes, each of 16 CPU and 64Gi, requested whole
// by online pods that use 500m and 2Gi each: 2 CPU of 16.
func createFixtures() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range []string{onlineNS, offlineNS} {
		if err := apiServer.CreateNamespace(ctx, ns); err != nil {
			return err
		}
	}
	for _, name := range nodeNames {
		spec := simkwok.NodeSpec{Name: name, CPU: *resource.NewMilliQuantity(nodeMilliCPU, resource.DecimalSI), Memory: resource.MustParse("64Gi")}
		if err := apiServer.Client.Create(ctx, simkwok.NodeObject(spec)); err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
		for i := range onlinePerNode {
			if err := apiServer.Client.Create(ctx, onlinePod(name, i)); err != nil {
				return fmt.Errorf("creating an online pod: %w", err)
			}
		}
	}
	return nil
}

// onlinePod is the i-th online pod of node: a web server that requests a
// quarter of the node and uses a fraction of it.
func onlinePod(node string, i int) *corev1.Pod {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: onlineNS, Name: fmt.Sprintf("web-%s-%d", node, i),
			Labels:      map[string]string{"app": "web", "node": node},
			Annotations: map[string]string{simkwok.UsageCPUAnnotation: "500m", simkwok.UsageMemoryAnnotation: "2Gi"},
		},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{corev1.LabelHostname: node},
			Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:never-pulled",
				Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}},
		},
	}
}

// setOnlineUse sets what every online pod of node uses.
func setOnlineUse(t *testing.T, node, cpu string) {
	t.Helper()
	setOnlineUsage(t, node, simkwok.UsageCPUAnnotation, cpu)
}

// setOnlineMemory sets the memory every online pod of node uses.
func setOnlineMemory(t *testing.T, node, memory string) {
	t.Helper()
	setOnlineUsage(t, node, simkwok.UsageMemoryAnnotation, memory)
}

// setOnlineUsage sets the usage annotation of every online pod of node.
func setOnlineUsage(t *testing.T, node, annotation, value string) {
	t.Helper()
	ctx := context.Background()
	var pods corev1.PodList
	if err := apiServer.Client.List(ctx, &pods, client.InNamespace(onlineNS), client.MatchingLabels{"node": node}); err != nil {
		t.Fatal(err)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotation: value}}})
	for i := range pods.Items {
		if err := apiServer.Client.Patch(ctx, &pods.Items[i], client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
}

// onlinePods are the online pods of node, by name.
func onlinePods(t *testing.T, node string) map[string]corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := apiServer.Client.List(context.Background(), &pods, client.InNamespace(onlineNS), client.MatchingLabels{"node": node}); err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		out[p.Name] = p
	}
	return out
}

// trainingJob is a TFJob of workers on node, each asking for cpu and 4Gi
// the way users write it (cpu and memory), each using what it asks and
// exiting 0 after runFor.
func trainingJob(name, node string, workers int32, cpu string, runFor time.Duration) *kubeflowv1.TFJob {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("4Gi")}
	return &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: offlineNS, Name: name},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {
				Replicas:      &workers,
				RestartPolicy: kubeflowv1.RestartPolicyNever,
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
						simkwok.UsageCPUAnnotation: cpu, simkwok.UsageMemoryAnnotation: "4Gi",
						simkwok.SimDurationAnnotation: runFor.String(),
					}},
					Spec: corev1.PodSpec{
						NodeSelector: map[string]string{corev1.LabelHostname: node},
						Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "registry.invalid/train:never-pulled",
							Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}},
					},
				},
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

// running counts the pods running on node and not being deleted.
func running(pods []corev1.Pod, node string) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName == node && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// explanation is node's reclaim annotation and published batch CPU.
func explanation(ctx context.Context, node string) (reclaim.Explanation, int64, error) {
	n := &corev1.Node{}
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		return reclaim.Explanation{}, 0, err
	}
	e, _, err := reclaim.ReadExplanation(n.Annotations)
	capacity, allocatable := n.Status.Capacity[colocation.ResourceBatchCPU], n.Status.Allocatable[colocation.ResourceBatchCPU]
	if capacity.Cmp(allocatable) != 0 {
		return e, 0, fmt.Errorf("node %s: batch-cpu capacity %s, allocatable %s: they must be equal", node, capacity.String(), allocatable.String())
	}
	return e, capacity.Value(), err
}

// idleCPU is the target of a node's batch CPU while its online pods use
// their 500m each: 16 CPU less the 10% margin and 2 CPU.
const idleCPU = 12400

// measureNoise is how far below idleCPU a settled target may be:
// Prometheus reads the online pods' 2000m as 2001m or 2002m and the node's
// own use as a few millicores.
const measureNoise = 50

// publishesIdleCPU says whether node publishes its idle CPU, settled:
// usage current, no hold, and the published CPU where the manager leaves
// it, anywhere within the minimum change (1% of the node's 16 CPU) of a
// target of idleCPU less measureNoise at most. The explanation's own
// target cannot tell: the node's annotation is written only when a
// decision changes what the node offers, so its target is that of the
// last change, which a transient (pods of an earlier test starting or
// ending, Prometheus restarting) may have set.
func publishesIdleCPU(ctx context.Context, node string) (bool, string, error) {
	e, published, err := explanation(ctx, node)
	tolerance := int64(nodeMilliCPU * settings().MinChange / 100)
	ok := e.State == reclaim.StateFresh && e.Online == nil &&
		published >= idleCPU-measureNoise-tolerance && published <= idleCPU+tolerance
	return ok, fmt.Sprintf("published %dm, want %dm to %dm: %+v", published, idleCPU-measureNoise-tolerance, idleCPU+tolerance, e), err
}

// eventually polls cond every 200ms until it holds, or fails t after
// timeout with what cond last said when it saw something (a call that
// erred, at the deadline say, saw nothing).
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, state, err := cond(ctx)
		if state != "" && err == nil {
			last = state
		}
		return ok, err
	})
	if err != nil {
		t.Fatalf("Waiting %v for %s: %v; last seen: %s", timeout, what, err, last)
	}
}

// throughout checks cond every 200ms for d and fails t the first time it
// does not hold, or when it could look fewer than three times (an answer
// that errs or is cut short by the deadline says nothing).
func throughout(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	looked := 0
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, d, true, func(ctx context.Context) (bool, error) {
		ok, state, err := cond(ctx)
		if err != nil || ctx.Err() != nil {
			return false, nil
		}
		looked++
		if !ok {
			return false, fmt.Errorf("%s stopped holding; seen: %s", what, state)
		}
		return false, nil
	})
	if !wait.Interrupted(err) {
		t.Fatal(err)
	}
	if looked < 3 {
		t.Fatalf("%s: looked only %d times in %v", what, looked, d)
	}
}

// dumpOnFailure logs every pod and node's reclaim state if t fails.
func dumpOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx := context.Background()
		var pods corev1.PodList
		if err := apiServer.Client.List(ctx, &pods); err == nil {
			for _, p := range pods.Items {
				t.Logf("pod %s/%s node=%q phase=%s deleting=%v requests=%v", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase,
					p.DeletionTimestamp != nil, p.Spec.Containers[0].Resources.Requests)
			}
		}
		for _, n := range nodeNames {
			e, published, err := explanation(ctx, n)
			t.Logf("node %s published %dm (%v): %+v", n, published, err, e)
		}
		var events eventsv1.EventList
		if err := apiServer.Client.List(ctx, &events, client.InNamespace(offlineNS)); err == nil {
			for _, e := range events.Items {
				t.Logf("event %s %s %s: %s", e.Regarding.Name, e.Type, e.Reason, e.Note)
			}
		}
	})
}

// counter is the value of a counter of the manager's registry (it runs in
// this process) with the given labels.
func counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return framework.RegistrySample(t, name, labels).GetCounter().GetValue()
}

// gauge is the value of a gauge of the manager's registry with the given
// labels, 0 when it has none.
func gauge(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return framework.RegistrySample(t, name, labels).GetGauge().GetValue()
}
