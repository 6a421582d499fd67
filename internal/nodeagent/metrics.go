package nodeagent

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// The results of memory evictions, the values of
// backfill_node_agent_memory_evictions_total's result label.
const (
	EvictionEvicted = "evicted"
	// EvictionRefused: a PodDisruptionBudget refused it.
	EvictionRefused = "refused"
)

// agentMetrics are the agent's metrics, on its own registry: it is not
// the manager, and runs on every node.
type agentMetrics struct {
	ceiling    prometheus.Gauge
	used       *prometheus.GaugeVec
	throttled  prometheus.Counter
	evictions  *prometheus.CounterVec
	memoryUsed prometheus.Gauge
	onlineWait *prometheus.CounterVec
	// waited are the online pods whose wait is exported, to drop the
	// series of a pod gone.
	waited map[types.UID][2]string
}

func newAgentMetrics() *agentMetrics {
	return &agentMetrics{
		ceiling: prometheus.NewGauge(prometheus.GaugeOpts{Name: "backfill_node_agent_offline_cpu_ceiling_cores",
			Help: "The CPU the node agent lets offline pods on reclaimed capacity use together, in cores; -1 while it sets none."}),
		used: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "backfill_node_agent_cpu_used_cores",
			Help: "The CPU the node's online pods, offline pods on reclaimed capacity and system used over the agent's last tick, in cores, from the cgroups."}, []string{"tier"}),
		throttled: prometheus.NewCounter(prometheus.CounterOpts{Name: "backfill_node_agent_offline_cpu_throttled_seconds_total",
			Help: "Time offline pods on reclaimed capacity spent throttled by their CPU ceiling, summed over pods."}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "backfill_node_agent_memory_evictions_total",
			Help: "Offline pods the node agent asked to evict because the node's memory passed its threshold, by result (evicted, refused)."}, []string{"result"}),
		memoryUsed: prometheus.NewGauge(prometheus.GaugeOpts{Name: "backfill_node_agent_memory_used_ratio",
			Help: "The share of the node's memory in use (total less available), from 0 to 1."}),
		onlineWait: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "backfill_node_agent_online_cpu_wait_seconds_total",
			Help: "Time during which at least one thread of an online pod waited, runnable, for a CPU (pressure stall information's \"some\"), by pod: the interference signal. " +
				"Read from the pod's cpu.pressure on cgroup v2, and on v1 where a unified hierarchy holds the pod; " +
				"else (cgroup v1) estimated from its threads' run-queue waits, summed but at most the time elapsed, which reads above \"some\" while threads wait at once."}, []string{"namespace", "pod"}),
		waited: map[types.UID][2]string{},
	}
}

func (m *agentMetrics) register(r prometheus.Registerer) error {
	var errs []error
	for _, c := range m.collectors() {
		errs = append(errs, r.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("registering the node agent's metrics: %w", err)
	}
	m.ceiling.Set(-1)
	for _, t := range colocation.Tiers {
		m.used.WithLabelValues(string(t))
	}
	m.used.WithLabelValues(tierSystem)
	for _, r := range []string{EvictionEvicted, EvictionRefused} {
		m.evictions.WithLabelValues(r)
	}
	return nil
}

func (m *agentMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.ceiling, m.used, m.throttled, m.evictions, m.memoryUsed, m.onlineWait}
}

// tierSystem is the tier label of what the node uses beyond its pods.
const tierSystem = "system"

// MetricNames are the names of the agent's metrics, for the docs' check.
func MetricNames() []string {
	var names []string
	for _, c := range newAgentMetrics().collectors() {
		names = append(names, metrics.DescribedNames(c)...)
	}
	return names
}
