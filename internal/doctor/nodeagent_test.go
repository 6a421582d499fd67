package doctor

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// nodeAgentPod is the node agent's pod on node, labelled as the chart's
// DaemonSet labels it, in the agent's own namespace; running, not ready.
func nodeAgentPod(node string) *podBuilder {
	b := onlinePod("backfill-node-agent-"+node, 2000001000).
		labels("app.kubernetes.io/name", "backfill", "app.kubernetes.io/instance", "backfill", "app.kubernetes.io/component", "node-agent").
		on(node)
	b.pod.Namespace = "backfill-node-agent"
	return b
}

// crashLoopingAgent is an agent pod whose container waits in
// CrashLoopBackOff.
func crashLoopingAgent(node string) corev1.Pod {
	p := nodeAgentPod(node).obj()
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "node-agent", RestartCount: 4,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
	}}
	return p
}

func TestCheckNodeAgent(t *testing.T) {
	reclaimed := makeJob("mnist").workers(3, "backfill.dev/batch-cpu", "2000", "backfill.dev/batch-memory", "4Gi").obj()
	onRequests := makeJob("resnet").workers(1, "nvidia.com/gpu", "1", "cpu", "4").obj()
	onReclaimed := func(name, node string) corev1.Pod { return jobPod(reclaimed, name).on(node).obj() }
	finished := jobPod(reclaimed, "mnist-worker-9").on("cpu-9").obj()
	finished.Status.Phase = corev1.PodSucceeded

	cases := map[string]struct {
		pods         []corev1.Pod
		wantStatus   Status
		wantFindings []string
		wantFix      []string
	}{
		"no pod on reclaimed capacity": {
			pods:         []corev1.Pod{jobPod(onRequests, "resnet-worker-0").on("gpu-0").obj(), nodeAgentPod("gpu-0").ready().obj()},
			wantStatus:   StatusOK,
			wantFindings: []string{"no pod runs on reclaimed capacity (backfill.dev/batch-cpu or backfill.dev/batch-memory requests): no node needs the node agent yet (1 node(s) have a ready agent)"},
		},
		"a ready agent on every node with offline pods on reclaimed capacity": {
			pods: []corev1.Pod{
				onReclaimed("mnist-worker-0", "cpu-0"), onReclaimed("mnist-worker-1", "cpu-0"), onReclaimed("mnist-worker-2", "cpu-1"),
				nodeAgentPod("cpu-0").ready().obj(), nodeAgentPod("cpu-1").ready().obj(),
				// A node without offline pods needs no agent.
				jobPod(onRequests, "resnet-worker-0").on("gpu-0").obj(),
			},
			wantStatus:   StatusOK,
			wantFindings: []string{"a ready node agent runs on every one of 2 node(s) with offline pods on reclaimed capacity"},
		},
		"finished and unscheduled pods need no agent": {
			pods:         []corev1.Pod{finished, jobPod(reclaimed, "mnist-worker-0").obj()},
			wantStatus:   StatusOK,
			wantFindings: []string{"no pod runs on reclaimed capacity"},
		},
		"no agent anywhere": {
			pods:       []corev1.Pod{onReclaimed("mnist-worker-0", "cpu-0"), onReclaimed("mnist-worker-1", "cpu-1")},
			wantStatus: StatusWarn,
			wantFindings: []string{
				"no node agent pod in any namespace (pods labelled app.kubernetes.io/name=backfill,app.kubernetes.io/component=node-agent), " +
					"and 2 node(s) run offline pods on reclaimed capacity (cpu-0, cpu-1): there those pods run with the kernel's CPU weights alone",
			},
			wantFix: []string{"--set nodeAgent.enabled=true", "config/nodeagent", "kubectl get daemonset -A -l app.kubernetes.io/name=backfill,app.kubernetes.io/component=node-agent", "koordlet"},
		},
		"agents missing or not ready on some nodes": {
			pods: []corev1.Pod{
				onReclaimed("mnist-worker-0", "cpu-0"), onReclaimed("mnist-worker-1", "cpu-1"), onReclaimed("mnist-worker-2", "gpu-0"),
				nodeAgentPod("cpu-0").ready().obj(), crashLoopingAgent("gpu-0"),
			},
			wantStatus: StatusFail,
			wantFindings: []string{
				"2 of 3 node(s) with offline pods on reclaimed capacity have no ready node agent " +
					"(cpu-1 (no agent pod), gpu-0 (agent backfill-node-agent/backfill-node-agent-gpu-0 not ready: CrashLoopBackOff))",
				"nothing holds their CPU back within a second",
			},
			wantFix: []string{"nodeSelector and tolerations", "kubectl describe node NODE", "kubectl logs -n NAMESPACE POD", "--kubelet-cgroup-root"},
		},
		"an agent being deleted is none": {
			pods: func() []corev1.Pod {
				leaving := nodeAgentPod("cpu-0").ready().obj()
				leaving.DeletionTimestamp = new(leaving.CreationTimestamp)
				return []corev1.Pod{onReclaimed("mnist-worker-0", "cpu-0"), nodeAgentPod("cpu-1").ready().obj(), leaving}
			}(),
			wantStatus:   StatusFail,
			wantFindings: []string{"1 of 1 node(s) with offline pods on reclaimed capacity have no ready node agent (cpu-0 (no agent pod))"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Pods = tc.pods
			got := checkNodeAgent(s)
			if got.Check != CheckNodeAgent || got.Status != tc.wantStatus {
				t.Fatalf("got %s %s %q, want %s", got.Check, got.Status, got.Finding, tc.wantStatus)
			}
			wantTexts(t, got, tc.wantFindings, tc.wantFix)
		})
	}
}
