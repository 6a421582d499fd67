package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The online signal's metrics' names. The pods' join series and the
// objectives come from the cluster view (colocation.go); the rest from the
// reclaim controller's reads and decisions.
const (
	NameOnlinePodInfo      = "backfill_online_pod_info"
	NameOnlineObjective    = "backfill_online_latency_objective_seconds"
	NameOnlineP99          = "backfill_online_latency_p99_seconds"
	NameReclaimOnlineHold  = "backfill_reclaim_node_online_hold"
	NameReclaimOnlineActed = "backfill_reclaim_online_actions_total"
)

// What the online signal does to a node, the values of
// backfill_reclaim_online_actions_total's action label.
const (
	// OnlineHold: a node's online pods suffer while offline pods run there;
	// it stops growing.
	OnlineHold = "hold"
	// OnlineGiveBack: the harm lasted; the node gave back a step of CPU by
	// evicting offline pods.
	OnlineGiveBack = "give_back"
	// OnlineRelease: the signal stayed healthy; the node grows again.
	OnlineRelease = "release"
)

// OnlineActions are the values of the action label.
var OnlineActions = []string{OnlineHold, OnlineGiveBack, OnlineRelease}

var (
	onlineP99 = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameOnlineP99,
		Help: "P99 request latency of an opted-in online workload over the reclaim rate window, by peers: all its pods, those on nodes where offline pods run (with_offline), the others (without_offline); absent for a group that served no request.",
	}, []string{"namespace", "workload", "peers"})
	reclaimOnlineHold = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameReclaimOnlineHold,
		Help: "1 while a node's reclaimed capacity is held back because its online pods suffer, by the signal that said so: latency (an objective missed) or cpu-wait.",
	}, []string{"node", "signal"})
	reclaimOnlineActions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameReclaimOnlineActed,
		Help: "What the online signal did to nodes: hold (stopped growing), give_back (evicted a step of offline CPU) and release (grows again after the signal stayed healthy).",
	}, []string{"action"})
)

// OnlineLatencies replaces the P99s of the opted-in workloads with those
// of the last read, keyed by namespace, workload and peers.
func OnlineLatencies(p99 map[[3]string]time.Duration) {
	onlineP99.Reset()
	for k, v := range p99 {
		onlineP99.WithLabelValues(k[0], k[1], k[2]).Set(v.Seconds())
	}
}

// NodeOnlineHold records which signal holds a node back, none when empty.
func NodeOnlineHold(node, signal string) {
	reclaimOnlineHold.DeletePartialMatch(prometheus.Labels{"node": node})
	if signal != "" {
		reclaimOnlineHold.WithLabelValues(node, signal).Set(1)
	}
}

// OnlineActed counts an action of the online signal (OnlineActions).
func OnlineActed(action string) { reclaimOnlineActions.WithLabelValues(action).Inc() }
