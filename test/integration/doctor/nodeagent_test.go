//go:build integration

package doctor

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// A pod on reclaimed capacity on each node, bound by hand as the scheduler
// would bind it. With no node agent anywhere, node-agent is a WARN naming
// the nodes; with an agent Ready on cpu-0 and one crash-looping on gpu-0, a
// FAIL naming gpu-0's agent and why; with both Ready, OK. The agents are
// pods labelled as the chart's DaemonSet labels them, in a namespace of
// their own, their status written as a kubelet would; they are removed at
// the end, so that later cases find no agent (a WARN at most).
func testNodeAgent(t *testing.T) {
	ns := newNamespace(t, "node-agent")
	agents := newNamespace(t, "backfill-node-agent")
	for _, node := range []string{cpuNode, gpuNode} {
		batch := quantities(string(colocation.ResourceBatchCPU), "1000", string(colocation.ResourceBatchMemory), "1Gi")
		createThenRemove(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainer-" + node},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
				Name: "tensorflow", Image: "tensorflow/tensorflow:2.15.0", Resources: corev1.ResourceRequirements{Requests: batch, Limits: batch},
			}}},
		})
	}

	r := doctorJSON(t, 0, "-n", ns)
	none := r.mustFind(t, "node-agent", "WARN", "",
		"no node agent pod in any namespace (pods labelled app.kubernetes.io/name=backfill,app.kubernetes.io/component=node-agent)",
		"run offline pods on reclaimed capacity (", cpuNode, gpuNode, "the kernel's CPU weights alone")
	if !strings.Contains(none.Fix, "nodeAgent.enabled=true") {
		t.Errorf("fix %q: want it to say how to install the agent", none.Fix)
	}

	onCPU := agentPod(t, agents, cpuNode)
	setAgentStatus(t, onCPU, true, "")
	onGPU := agentPod(t, agents, gpuNode)
	setAgentStatus(t, onGPU, false, "CrashLoopBackOff")
	r = doctorJSON(t, 1, "-n", ns)
	broken := r.mustFind(t, "node-agent", "FAIL", "",
		"of 2 node(s) with offline pods on reclaimed capacity have no ready node agent",
		gpuNode+" (agent "+agents+"/"+onGPU.Name+" not ready: CrashLoopBackOff)")
	if strings.Contains(broken.Finding, cpuNode+" (") {
		t.Errorf("finding %q blames %s, whose agent is Ready", broken.Finding, cpuNode)
	}
	if !strings.Contains(broken.Fix, "kubectl logs -n NAMESPACE POD") {
		t.Errorf("fix %q: want it to point at the agent's log", broken.Fix)
	}

	setAgentStatus(t, onGPU, true, "")
	r = doctorJSON(t, 0, "-n", ns)
	r.mustFind(t, "node-agent", "OK", "", "a ready node agent runs on every one of")
}

// agentPod creates the node agent's pod on node, labelled as the chart's
// DaemonSet labels it.
func agentPod(t *testing.T, ns, node string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backfill-node-agent-" + node, Labels: map[string]string{
			"app.kubernetes.io/name": "backfill", "app.kubernetes.io/instance": "backfill", "app.kubernetes.io/component": "node-agent",
		}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "node-agent", Image: "backfill:dev"}}},
	}
	createThenRemove(t, p)
	return p
}

// setAgentStatus writes the agent pod's status as its kubelet would:
// Running, Ready or not, its container waiting for reason if one is given.
func setAgentStatus(t *testing.T, p *corev1.Pod, ready bool, waiting string) {
	t.Helper()
	ctx := context.Background()
	if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatalf("reading pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	readiness := corev1.ConditionFalse
	if ready {
		readiness = corev1.ConditionTrue
	}
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	if waiting != "" {
		state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: readiness}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "node-agent", Image: "backfill:dev", Ready: ready, State: state}}
	if err := apiServer.Client.Status().Update(ctx, p); err != nil {
		t.Fatalf("writing the status of pod %s/%s: %v", p.Namespace, p.Name, err)
	}
}

// createThenRemove creates a pod bound to a node and deletes it at the
// end of the test at once: there is no kubelet to finish a graceful
// deletion.
func createThenRemove(t *testing.T, p *corev1.Pod) {
	t.Helper()
	create(t, p)
	t.Cleanup(func() {
		if err := apiServer.Client.Delete(context.Background(), p, client.GracePeriodSeconds(0)); err != nil {
			t.Errorf("deleting pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	})
}
