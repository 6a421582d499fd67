package cgroupsim

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/backfill-dev/backfill/internal/nodeagent"
	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// staticPods is the agent's view of the node's pods, listed already.
type staticPods []nodeagent.Pod

func (s staticPods) Pods(context.Context) ([]nodeagent.Pod, error) { return s, nil }
func (staticPods) WaitForSync(context.Context) bool                { return true }

// The real agent on a simulated node: three web pods use 10.5 of 16 cores,
// so the agent caps training at what they and the node's daemons leave
// below its 85% threshold, about 3 cores; the simulated kernel holds
// training to the quota the agent writes and counts the rest throttled;
// the agent exports the ceiling, the tiers' use, the throttling and the
// web pods' waits; once stopped it lifts the cap.
func TestTheAgentCapsTrainingOnASimulatedNode(t *testing.T) {
	var pods []*corev1.Pod
	var agentView staticPods
	for i := range 3 {
		p := onlinePod(fmt.Sprintf("web-%d", i), "3500m")
		pods = append(pods, p)
		agentView = append(agentView, nodeagent.Pod{Namespace: p.Namespace, Name: p.Name, UID: p.UID, QOS: p.Status.QOSClass,
			Limits: nodefs.Limits{Pod: 400_000, Containers: map[string]int64{}}, Weight: 4000})
	}
	train := offlinePod("train-0", "14")
	pods = append(pods, train)
	agentView = append(agentView, nodeagent.Pod{Namespace: train.Namespace, Name: train.Name, UID: train.UID, QOS: train.Status.QOSClass,
		Reclaimed: true, Limits: nodefs.Limits{Pod: -1, Containers: map[string]int64{}}, Weight: 14_000})
	n := testNodeOf(t, &pods)

	settings := nodeagent.DefaultSettings()
	settings.Interval = 100 * time.Millisecond
	registry := prometheus.NewRegistry()
	agent, err := nodeagent.New(nodeagent.Config{FS: n.tree.fs, Pods: &agentPods{node: n, cluster: agentView,
		synced: func(context.Context) bool { return true }}, Settings: settings, Registry: registry, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agent.Run(ctx) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() { _ = stop() })

	group := n.tree.fs.PodGroup(train.Status.QOSClass, train.UID)
	// What the online pods and the daemons leave below 85% of the node.
	const wantCeiling = 0.85*16 - 3*3.5 - 0.05
	var last string
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		m := gather(t, registry)
		// The agent writes as the test reads: a read that fails is retried.
		quota, err := n.tree.quota(group)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		idle, err := n.tree.idle(group)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		ceiling := m["backfill_node_agent_offline_cpu_ceiling_cores"]
		last = fmt.Sprintf("ceiling %.2f, the training's quota %.2f, idle %v, metrics %v", ceiling, quota, idle, m)
		return ceiling > wantCeiling-0.25 && ceiling < wantCeiling+0.25 && quota == ceiling && idle &&
			m["backfill_node_agent_offline_cpu_throttled_seconds_total"] > 0 &&
			m[`backfill_node_agent_cpu_used_cores{tier="online"}`] > 10 &&
			m[`backfill_node_agent_cpu_used_cores{tier="offline"}`] > 2.5 &&
			m[`backfill_node_agent_online_cpu_wait_seconds_total{namespace="online",pod="web-2"}`] > 0, nil
	})
	if err != nil {
		t.Fatalf("Waiting for the agent to cap training at about %.2f cores: %v; last: %s", wantCeiling, err, last)
	}

	if err := stop(); err != nil {
		t.Errorf("The agent's Run: %v", err)
	}
	if quota, err := n.tree.quota(group); err != nil || quota >= 0 {
		t.Errorf("The training's quota after the agent stopped: %v, %v; want none", quota, err)
	}
	if idle, err := n.tree.idle(group); err != nil || idle {
		t.Errorf("The training in the idle class after the agent stopped: %v, %v; want not", idle, err)
	}
}

// gather is the registry's samples by name and labels, e.g.
// `m{tier="online"}`.
func gather(t *testing.T, r *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			out[f.GetName()+labels(m)] = value(m)
		}
	}
	return out
}

func labels(m *dto.Metric) string {
	if len(m.GetLabel()) == 0 {
		return ""
	}
	s := "{"
	for i, l := range m.GetLabel() {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
	}
	return s + "}"
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	}
	return 0
}
