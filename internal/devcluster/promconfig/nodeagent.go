package promconfig

import "slices"

// JobNodeAgent is the job of the node agents' metrics.
const JobNodeAgent = "node-agent"

// NodeAgentTargetLabels are the target labels of the node agent of node:
// those the chart's PodMonitor gives a real agent's pod under
// kube-prometheus-stack, its node among them. With honor_labels: true the
// agent's own namespace and pod labels (an online pod's, on its wait)
// win over the agent pod's, as the chart's monitors have it.
func NodeAgentTargetLabels(node string) map[string]string {
	return map[string]string{
		"namespace": "backfill-node-agent",
		"pod":       "backfill-node-agent-" + node,
		"container": "node-agent",
		"endpoint":  "metrics",
		"node":      node,
	}
}

// nodeAgentJob has one target per node, all at addr, each on the path of
// its node's agent.
func nodeAgentJob(addr string, nodes []string, path func(node string) string) scrapeConfig {
	job := scrapeConfig{JobName: JobNodeAgent, HonorLabels: true, StaticConfigs: []staticConfig{}}
	for _, node := range slices.Sorted(slices.Values(nodes)) {
		labels := NodeAgentTargetLabels(node)
		labels["__metrics_path__"] = path(node)
		job.StaticConfigs = append(job.StaticConfigs, staticConfig{Targets: []string{addr}, Labels: labels})
	}
	return job
}
