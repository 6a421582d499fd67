package doctor

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// NodeAgentComponentLabel and NodeAgentComponent select the node agent's
// pods beside ManagerPodLabel=ManagerPodLabelValue, as the Helm chart's
// DaemonSet and config/nodeagent label them. They run in a namespace of
// their own (privileged Pod Security), not the manager's, so doctor looks
// for them in every namespace.
const (
	NodeAgentComponentLabel = "app.kubernetes.io/component"
	NodeAgentComponent      = "node-agent"
)

// isNodeAgentPod tells the node agent's pods by their labels.
func isNodeAgentPod(p *corev1.Pod) bool {
	return p.Labels[ManagerPodLabel] == ManagerPodLabelValue && p.Labels[NodeAgentComponentLabel] == NodeAgentComponent
}

// nodeAgentSelector is the label selector of the agent's pods, for the
// commands of the fixes.
const nodeAgentSelector = ManagerPodLabel + "=" + ManagerPodLabelValue + "," + NodeAgentComponentLabel + "=" + NodeAgentComponent

// checkNodeAgent says whether a ready node agent runs on every node that
// runs offline pods on reclaimed capacity: pods whose requests hold
// backfill.dev/batch-cpu or backfill.dev/batch-memory. Without the agent
// those pods run with the kernel's CPU weights alone, and nothing holds
// their CPU back within a second when online pods need it. An agent missing
// on some of those nodes while it runs on others is a FAIL: the DaemonSet
// is installed and does not cover them. No agent anywhere is a WARN: the
// install left it out, maybe on purpose, for another node agent on the
// same cgroups.
func checkNodeAgent(s *Snapshot) Result {
	hosts := nodesOnReclaimedCapacity(s.Pods)
	agents := nodeAgentPods(s.Pods)
	readyOn := map[string]bool{}
	ready := 0
	for node, pods := range agents {
		if slices.ContainsFunc(pods, podReady) {
			readyOn[node] = true
			ready++
		}
	}
	if len(hosts) == 0 {
		return ok(CheckNodeAgent, fmt.Sprintf("no pod runs on reclaimed capacity (%s or %s requests): no node needs the node agent yet (%d node(s) have a ready agent)",
			colocation.ResourceBatchCPU, colocation.ResourceBatchMemory, ready))
	}
	var missing []string
	for _, node := range hosts {
		if !readyOn[node] {
			missing = append(missing, node)
		}
	}
	if len(missing) == 0 {
		return ok(CheckNodeAgent, fmt.Sprintf("a ready node agent runs on every one of %d node(s) with offline pods on reclaimed capacity", len(hosts)))
	}
	weightsAlone := "there those pods run with the kernel's CPU weights alone, and nothing holds their CPU back within a second when online pods need it"
	if len(agents) == 0 {
		return Result{Check: CheckNodeAgent, Status: StatusWarn,
			Finding: fmt.Sprintf("no node agent pod in any namespace (pods labelled %s), and %d node(s) run offline pods on reclaimed capacity (%s): %s",
				nodeAgentSelector, len(hosts), listNames(hosts), weightsAlone),
			Fix: "install the node agent: the Helm chart with --set nodeAgent.enabled=true, or config/nodeagent with kustomize (docs/install.md); " +
				"if it is installed, `kubectl get daemonset -A -l " + nodeAgentSelector + "` and `kubectl describe` of it say why it has no pods " +
				"(its namespace must admit privileged pods); if another node agent (koordlet, katalyst-agent) caps best-effort pods on these nodes, this is expected"}
	}
	var why []string
	for _, node := range missing {
		why = append(why, agentState(node, agents[node]))
	}
	return Result{Check: CheckNodeAgent, Status: StatusFail,
		Finding: fmt.Sprintf("%d of %d node(s) with offline pods on reclaimed capacity have no ready node agent (%s): %s",
			len(missing), len(hosts), listNames(why), weightsAlone),
		Fix: "on a node with no agent pod, the DaemonSet places none: compare its nodeSelector and tolerations (chart values nodeAgent.nodeSelector, nodeAgent.tolerations) " +
			"with the node's labels and taints (`kubectl get daemonset -A -l " + nodeAgentSelector + " -o yaml`, `kubectl describe node NODE`); " +
			"for an agent that is not ready, `kubectl logs -n NAMESPACE POD` says what it lacks (the node's /sys/fs/cgroup, the kubelet's cgroup root: --kubelet-cgroup-root)"}
}

// nodesOnReclaimedCapacity are the nodes, sorted, where pods that have not
// finished hold reclaimed capacity.
func nodesOnReclaimedCapacity(pods []corev1.Pod) []string {
	var nodes []string
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if colocation.BatchOf(podRequests(p)).IsZero() || slices.Contains(nodes, p.Spec.NodeName) {
			continue
		}
		nodes = append(nodes, p.Spec.NodeName)
	}
	slices.Sort(nodes)
	return nodes
}

// nodeAgentPods are the agent's pods that are not being deleted, by node.
func nodeAgentPods(pods []corev1.Pod) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if isNodeAgentPod(p) && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p)
		}
	}
	return out
}

// podReady reports whether a pod's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// agentState says why a node has no ready agent: none there, or its pod
// and what holds it back.
func agentState(node string, pods []*corev1.Pod) string {
	if len(pods) == 0 {
		return node + " (no agent pod)"
	}
	p := pods[0]
	state := string(p.Status.Phase)
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Waiting != nil && c.State.Waiting.Reason != "" {
			state = c.State.Waiting.Reason
			break
		}
	}
	if state == "" {
		state = string(corev1.PodPending)
	}
	return fmt.Sprintf("%s (agent %s/%s not ready: %s)", node, p.Namespace, p.Name, state)
}
