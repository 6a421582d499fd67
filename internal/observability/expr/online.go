package expr

import "fmt"

// Online latency as a signal: an online workload opts in with the pod
// template annotation backfill.dev/latency-objective, and the manager
// exports its declared P99 objective, the P99 it computes from the
// workload's own histogram each reclaim interval, and the nodes whose
// reclaimed capacity it holds back while online pods suffer. The series
// name the workload's namespace in namespace: scraped with honorLabels
// true, as the chart's monitors do, the manager's own namespace and pod
// never replace it; the fragments aggregate by the labels they mean, which
// drops the scrape target's and keeps one series while two manager
// replicas are scraped during a leader change.
const (
	// MetricOnlinePodInfo is 1 per online pod of an opted-in workload
	// bound to a node, labelled namespace, pod, node, workload and
	// offline_beside ("true" when offline pods run on the node).
	MetricOnlinePodInfo = "backfill_online_pod_info"
	// MetricOnlineLatencyObjective is a workload's declared P99 objective
	// in seconds, labelled namespace and workload.
	MetricOnlineLatencyObjective = "backfill_online_latency_objective_seconds"
	// MetricOnlineLatencyP99 is a workload's P99 in seconds, labelled
	// namespace, workload and peers (Peers…); a peers value is absent
	// while none of that group's pods served a request.
	MetricOnlineLatencyP99 = "backfill_online_latency_p99_seconds"
	// MetricReclaimOnlineHold is 1 while a node's reclaimed capacity is
	// held back by the online signal, labelled node and signal
	// (OnlineSignal…).
	MetricReclaimOnlineHold = "backfill_reclaim_node_online_hold"
	// MetricReclaimOnlineActions counts what the online signal did, by
	// action (OnlineAction…).
	MetricReclaimOnlineActions = "backfill_reclaim_online_actions_total"
	// MetricCPUPressureWaiting is the kubelet's (cAdvisor's) cumulative
	// CPU pressure "some" per container: time at least one of its threads
	// waited, runnable, for a CPU. Needs cgroup v2 and, before Kubernetes
	// 1.34, the kubelet's KubeletPSI feature gate.
	MetricCPUPressureWaiting = "container_pressure_cpu_waiting_seconds_total"
)

// The peers label values of MetricOnlineLatencyP99: which of a workload's
// pods the P99 is of.
const (
	PeersAll = "all"
	// PeersWithOffline are its pods on nodes where offline pods run.
	PeersWithOffline = "with_offline"
	// PeersWithoutOffline are its pods on the other nodes.
	PeersWithoutOffline = "without_offline"
)

// The signal label values of MetricReclaimOnlineHold.
const (
	// OnlineSignalLatency: a workload's P99 on the node above its
	// objective.
	OnlineSignalLatency = "latency"
	// OnlineSignalCPUWait: the node's online pods wait for a CPU more
	// than the manager's --reclaim-online-cpu-wait.
	OnlineSignalCPUWait = "cpu-wait"
)

// The action label values of MetricReclaimOnlineActions.
const (
	// OnlineActionHold: a node's hold began (no growth, no room for new
	// offline pods).
	OnlineActionHold = "hold"
	// OnlineActionGiveBack: a held node gave back a step of its reclaimed
	// CPU by evicting offline pods.
	OnlineActionGiveBack = "give_back"
	// OnlineActionRelease: a hold ended after the signal stayed healthy.
	OnlineActionRelease = "release"
)

// OnlineLatencyP99 is each opted-in workload's P99 in seconds among peers
// (Peers…), labelled namespace and workload, of the series matchers
// selects (empty for all).
func OnlineLatencyP99(peers, matchers string) string {
	return "max by (namespace, workload) (" + selector(MetricOnlineLatencyP99, fmt.Sprintf("peers=%q", peers), matchers) + ")"
}

// OnlineLatencyObjective is each opted-in workload's P99 objective in
// seconds, labelled namespace and workload.
func OnlineLatencyObjective(matchers string) string {
	return "max by (namespace, workload) (" + selector(MetricOnlineLatencyObjective, matchers) + ")"
}

// OnlineObjectiveMissed is the P99 among peers of each workload whose P99
// there is above its objective, labelled namespace and workload.
func OnlineObjectiveMissed(peers string) string {
	return OnlineLatencyP99(peers, "") + " > on (namespace, workload) " + OnlineLatencyObjective("")
}

// NodesHeldByOnlineSignal is 1 per node whose reclaimed capacity the
// online signal holds back, labelled node and signal, of the series
// matchers selects (e.g. `signal="latency"`; empty for all).
func NodesHeldByOnlineSignal(matchers string) string {
	return "max by (node, signal) (" + selector(MetricReclaimOnlineHold, matchers) + ") == 1"
}

// OnlineActionsOver is how often the online signal took an action
// (OnlineAction…), per second over the cluster, over a rate window of the
// caller's.
func OnlineActionsOver(action, window string) string {
	return fmt.Sprintf("sum(rate(%s[%s]))", selector(MetricReclaimOnlineActions, fmt.Sprintf("action=%q", action)), window)
}

// OnlineCPUPressureByNodeOver is how long the online pods of each node
// waited for a CPU, in seconds per second summed over the pods, labelled
// node, over a rate window of the caller's: the node agent's measure where
// an agent reports the node's online pods, else cAdvisor's CPU pressure of
// the containers of every pod that is not offline. Both count the time
// during which at least one thread waited (pressure stall information's
// "some"), but not over the same threads, nor always from the kernel's
// count: the agent per pod, from the pod's cpu.pressure on cgroup v2 and
// where v1 has a unified hierarchy, else (v1) from an estimate that reads
// above "some" while the pod's threads wait at once, never above 1 s/s;
// cAdvisor per container, on cgroup v2 only, summed here over a pod's
// containers, which reads above the pod's "some" while two of its
// containers wait at once. It is what the manager reads as the cpu-wait
// signal.
func OnlineCPUPressureByNodeOver(window, matchers string) string {
	psiByPod := fmt.Sprintf("sum by (node, namespace, pod) (rate(%s[%s]))", selector(MetricCPUPressureWaiting, ContainerSelector, matchers), window)
	return OnlineCPUWaitByNodeOver(window, matchers) + " or " + onlineOnly(psiByPod)
}
