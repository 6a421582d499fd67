package rules

import (
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/backfill-dev/backfill/internal/metrics"
)

// Thresholds of the reclaimed-capacity alerts, as docs/observability.md
// states them.
const (
	// ReclaimEvictionStormPods evictions for online protection within
	// ReclaimEvictionStormWindow, for ReclaimEvictionStormFor, make a
	// storm. Lower than DisruptionStormPods: after an eviction a node
	// offers no room for --reclaim-cooldown, so on a sound setting these
	// evictions are rare, and each one is the manager's own decision.
	ReclaimEvictionStormPods   = 5
	ReclaimEvictionStormWindow = 10 * time.Minute
	ReclaimEvictionStormFor    = 5 * time.Minute
	// UsageStaleFor is how long a node's reclaimed capacity may stay
	// frozen, or the usage source fail, before anyone is told: a failed
	// query or a late sample or two is normal.
	UsageStaleFor = 10 * time.Minute
)

// reclaimEvictionStorm: the manager evicted many offline pods to protect
// online pods in a short time. Cluster-wide, because
// backfill_reclaim_evictions_total carries no node label (its labels are
// bounded: resource and result); the events and the node annotation name
// the nodes.
func reclaimEvictionStorm() Alert {
	return Alert{
		Name: "BackfillReclaimEvictionStorm",
		Expr: fmt.Sprintf(`sum(increase(%s{result=%q}[%s])) > %d`,
			metrics.NameReclaimEvictions, metrics.EvictionEvicted, model.Duration(ReclaimEvictionStormWindow), ReclaimEvictionStormPods),
		For:      ReclaimEvictionStormFor,
		Severity: SeverityWarning,
		// A tuning signal: the margins are too thin, online pods were protected.
		Profile: ProfileFull,
		Summary: "backfill keeps evicting offline pods to protect online pods",
		Description: "The manager evicted {{ $value | printf \"%.0f\" }} offline pods in the last " + words(ReclaimEvictionStormWindow) +
			" because online use rose into the reclaimed capacity they held. " +
			"The reclaimed capacity is set too close to online use: training is started and evicted again and again.",
	}
}

// reclaimUsageStale: a node's reclaimed capacity frozen on stale or
// missing usage, or the usage source failing. While the source fails every
// node is frozen; its one alert, labelled source, then stands for all of
// them rather than one per node.
func reclaimUsageStale() Alert {
	frozen := fmt.Sprintf(`max by (node) (%s) == 1`, metrics.NameReclaimFrozen)
	sourceDown := fmt.Sprintf(`max by (source) (%s) == 0`, metrics.NameReclaimSourceUp)
	return Alert{
		Name:     "BackfillReclaimUsageStale",
		Expr:     fmt.Sprintf(`(%s unless on () (%s)) or (%s)`, frozen, sourceDown, sourceDown),
		For:      UsageStaleFor,
		Severity: SeverityWarning,
		// With no usage, reclaimed capacity no longer follows online use.
		Profile: ProfileEssential,
		Summary: "{{ if $labels.source }}backfill's usage source {{ $labels.source }} is failing" +
			"{{ else }}Reclaimed capacity of node {{ $labels.node }} is frozen{{ end }}",
		Description: "{{ if $labels.source }}The manager's usage source {{ $labels.source }} has failed its queries for " + words(UsageStaleFor) +
			": the reclaimed capacity of every node is frozen." +
			"{{ else }}Node {{ $labels.node }} has had no current usage for " + words(UsageStaleFor) +
			" (its newest sample is older than --reclaim-stale-after, or missing): its reclaimed capacity is frozen.{{ end }}" +
			" Frozen capacity does not grow, and no offline pod is evicted to protect online pods: a rise of online use goes unanswered.",
	}
}
