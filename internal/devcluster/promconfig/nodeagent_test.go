package promconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// The node agents' job: one target per node at the agents' address, on
// its node's path, labelled as the chart's PodMonitor labels an agent's
// pod, node included, and honoring the agents' own labels.
func TestConfigWithNodeAgents(t *testing.T) {
	tg := validTargets()
	tg.NodeAgents = "127.0.0.1:9402"
	tg.NodeAgentPath = func(node string) string { return "/agents/" + node }
	out, err := Config(tg)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	var f struct {
		ScrapeConfigs []any `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	const want = `
job_name: node-agent
honor_labels: true
static_configs:
- targets: ["127.0.0.1:9402"]
  labels: {__metrics_path__: /agents/gpu-node-0, node: gpu-node-0, namespace: backfill-node-agent, pod: backfill-node-agent-gpu-node-0, container: node-agent, endpoint: metrics}
- targets: ["127.0.0.1:9402"]
  labels: {__metrics_path__: /agents/gpu-node-1, node: gpu-node-1, namespace: backfill-node-agent, pod: backfill-node-agent-gpu-node-1, container: node-agent, endpoint: metrics}
`
	for _, job := range f.ScrapeConfigs {
		if job.(map[string]any)["job_name"] == JobNodeAgent {
			if diff := cmp.Diff(decode(t, []byte(want)), job); diff != "" {
				t.Errorf("the %s job (-want +got):\n%s", JobNodeAgent, diff)
			}
			return
		}
	}
	t.Errorf("no %s job:\n%s", JobNodeAgent, out)
}

func TestConfigRejectsNodeAgentsWithoutPaths(t *testing.T) {
	tg := validTargets()
	tg.NodeAgents = "127.0.0.1:9402"
	if _, err := Config(tg); err == nil {
		t.Error("node agents without their paths: no error")
	}
	tg.NodeAgentPath = func(node string) string { return "/" + node }
	tg.NodeAgents = "nowhere"
	if _, err := Config(tg); err == nil {
		t.Error("node agents at an address without a port: no error")
	}
}
