package rules

import (
	"time"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// OnlineObjectiveMissedFor is how long a workload's P99 beside offline
// pods may stay above its objective before anyone is told: the manager
// holds the nodes back at once and gives back a step after
// --reclaim-online-evict-after (2 minutes by default), so a miss that
// lasts 10 minutes is one its steps did not cure.
const OnlineObjectiveMissedFor = 10 * time.Minute

// onlineObjectiveMissed: an opted-in workload's P99 over its pods on nodes
// where offline pods run is above the objective it declares. Its pods on
// the other nodes are left out: a workload slow everywhere is not
// co-location's doing, and evicting training would not help it.
func onlineObjectiveMissed() Alert {
	return Alert{
		Name: "BackfillOnlineObjectiveMissed",
		Expr: expr.OnlineObjectiveMissed(expr.PeersWithOffline),
		For:  OnlineObjectiveMissedFor,
		// Critical, the one alert that pages: a service's users wait longer
		// than its owners promised, and it lasted past the manager's own
		// remedy.
		Severity: SeverityCritical,
		// Online services harmed: a workload misses the objective it declares.
		Profile: ProfileEssential,
		Summary: "Workload {{ $labels.namespace }}/{{ $labels.workload }} misses its P99 objective beside offline pods",
		Description: "The P99 latency of workload {{ $labels.namespace }}/{{ $labels.workload }} over its pods on nodes where offline pods run " +
			"has been above the objective it declares (backfill.dev/latency-objective) for " + words(OnlineObjectiveMissedFor) + " (now {{ $value | humanizeDuration }}). " +
			"backfill holds those nodes back: they do not grow and offer no room to new offline pods, and while the miss lasts they give reclaimed CPU back " +
			"a step at a time by evicting offline pods (--reclaim-online-step after --reclaim-online-evict-after, one step per cool-down). " +
			"Compare its P99 on nodes without offline pods (the cockpit's row Is co-location hurting online?): if that misses too, the workload is slow by itself " +
			"(its objective is too tight, or it needs CPU of its own); if not, keep offline work further from it: lower the node agent's --cpu-threshold, " +
			"raise --reclaim-cpu-margin, or keep offline pods off its nodes.",
	}
}
