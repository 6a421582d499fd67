package rules

import (
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// Thresholds of the alerts, as docs/observability.md states them.
const (
	// GPUIdleUtilPercent and GPUIdleFor: a GPU of a running TFJob busy
	// less than 10% for 30 minutes is held for nothing.
	GPUIdleUtilPercent = 10
	GPUIdleFor         = 30 * time.Minute
	// RestartsPerHour restarts charged to backoffLimit within an hour make
	// a job restart often.
	RestartsPerHour = 3
	// PendingTooLong is how long after its creation a TFJob may wait for
	// its pods to run.
	PendingTooLong = 30 * time.Minute
	// DisruptionStormPods offline pods disrupted within DisruptionStormWindow
	// make a storm.
	DisruptionStormPods   = 10
	DisruptionStormWindow = 10 * time.Minute
	// NearLimitRatio of the online pods' limits in use, for NearLimitFor,
	// is close to them.
	NearLimitRatio = 0.9
	NearLimitFor   = 15 * time.Minute
)

// Groups are every alerting rule backfill ships.
func Groups() []Group {
	return []Group{
		{Name: "backfill-tfjobs", Alerts: []Alert{gpuIdle(), restartingOften(), failed(), pendingTooLong(), goodputLow(), gpuMemoryNearFull()}},
		{Name: "backfill-colocation", Alerts: []Alert{disruptionStorm(), onlineCPUNearLimit(), onlineMemoryNearLimit()}},
		{Name: "backfill-reclaim", Alerts: []Alert{reclaimEvictionStorm(), reclaimUsageStale()}},
		{Name: "backfill-node-agent", Alerts: []Alert{onlinePodsWaitForCPU(), nodeAgentMissing()}},
		{Name: "backfill-online", Alerts: []Alert{onlineObjectiveMissed()}},
		{Name: "backfill-gpu-loans", Alerts: []Alert{gpuLoanReturnedLate(), gpuLoanMissedReturn()}},
	}
}

// gpuIdle: dcgm-exporter's utilisation of a GPU assigned to an offline pod
// of a Running TFJob.
func gpuIdle() Alert {
	return Alert{
		Name: "BackfillTFJobGPUIdle",
		Expr: fmt.Sprintf(`(%s) < %d and on (namespace, tfjob) %s{phase="Running"}`,
			expr.OfflineGPUUtilByGPU(), GPUIdleUtilPercent, metrics.NameJobInfo),
		For:      GPUIdleFor,
		Severity: SeverityWarning,
		// A GPU held for nothing is the costliest waste a GPU cluster has.
		Profile: ProfileEssential,
		Summary: "A GPU of TFJob {{ $labels.namespace }}/{{ $labels.tfjob }} is idle",
		Description: "GPU {{ $labels.gpu }} ({{ $labels.UUID }}) of pod {{ $labels.namespace }}/{{ $labels.pod }} on node {{ $labels.node }} " +
			fmt.Sprintf("has been less than %d%% busy for %s while its TFJob runs (now {{ $value }}%%). ", GPUIdleUtilPercent, words(GPUIdleFor)) +
			"The job holds a GPU other jobs could use.",
	}
}

// restartingOften: status.restarts grew by RestartsPerHour within an hour.
func restartingOften() Alert {
	return Alert{
		Name:     "BackfillTFJobRestartingOften",
		Expr:     fmt.Sprintf(`max_over_time(%[1]s[1h]) - min_over_time(%[1]s[1h]) >= %d`, metrics.NameJobRestarts, RestartsPerHour),
		Severity: SeverityWarning,
		// BackfillTFJobFailed reports the jobs that restart until they fail.
		Profile: ProfileFull,
		Summary: "TFJob {{ $labels.namespace }}/{{ $labels.tfjob }} restarts often",
		Description: "TFJob {{ $labels.namespace }}/{{ $labels.tfjob }} had {{ $value }} restarts charged to its backoffLimit in the last hour " +
			"(failed pods recreated, containers restarted in place); it fails once backoffLimit is reached.",
	}
}

// failed: the job's phase is Failed.
func failed() Alert {
	return Alert{
		Name:     "BackfillTFJobFailed",
		Expr:     fmt.Sprintf(`%s{phase="Failed"} == 1`, metrics.NameJobInfo),
		Severity: SeverityWarning,
		// A failed job needs its owner, whatever the cause.
		Profile:     ProfileEssential,
		Summary:     "TFJob {{ $labels.namespace }}/{{ $labels.tfjob }} failed",
		Description: "TFJob {{ $labels.namespace }}/{{ $labels.tfjob }} failed; its Failed condition says why (a replica that failed for good, backoffLimit, activeDeadlineSeconds).",
	}
}

// pendingTooLong: created PendingTooLong ago and still Pending or Created,
// i.e. never ran.
func pendingTooLong() Alert {
	return Alert{
		Name: "BackfillTFJobPendingTooLong",
		Expr: fmt.Sprintf(`time() - %s > %d and on (namespace, tfjob) %s{phase=~"%s|Created"}`,
			metrics.NameJobCreatedTime, int(PendingTooLong.Seconds()), metrics.NameJobInfo, metrics.PhasePending),
		Severity: SeverityWarning,
		// Offline work waits for idle capacity by design; what is too long is learnt.
		Profile: ProfileFull,
		Summary: "TFJob {{ $labels.namespace }}/{{ $labels.tfjob }} has not run for " + words(PendingTooLong),
		Description: "TFJob {{ $labels.namespace }}/{{ $labels.tfjob }} was created {{ $value | humanizeDuration }} ago and none of its runs started: " +
			"its pods wait for room (offline work only gets idle capacity), for a gang, or cannot be created.",
	}
}

// disruptionStorm: many offline pods ended by preemption or eviction in a
// short time, across the cluster. The manager's own evictions for online
// protection (ReclaimedForOnline) are left to reclaimEvictionStorm, so that
// one storm is reported once, by the alert that names its cause.
func disruptionStorm() Alert {
	return Alert{
		Name: "BackfillOfflineDisruptionStorm",
		Expr: fmt.Sprintf(`sum(increase(%s{reason!=%q}[%s])) > %d`,
			metrics.NameDisruptions, colocation.ReasonReclaimedForOnline, model.Duration(DisruptionStormWindow), DisruptionStormPods),
		For:      5 * time.Minute,
		Severity: SeverityWarning,
		// A tuning signal: training slowed, nothing broken.
		Profile: ProfileFull,
		Summary: "Offline pods are being preempted or evicted in a storm",
		Description: "{{ $value | printf \"%.0f\" }} TFJob pods were preempted, evicted or lost with their node in the last " + words(DisruptionStormWindow) + ". " +
			"Training restarts from its checkpoints again and again and makes no progress.",
	}
}

// onlineCPUNearLimit: the online pods of a node with offline work use
// NearLimitRatio of their summed CPU limits.
func onlineCPUNearLimit() Alert {
	return Alert{
		Name:     "BackfillOnlineCPUNearLimit",
		Expr:     nearLimit(expr.OnlineCPUUsedByNode(), "cpu"),
		For:      NearLimitFor,
		Severity: SeverityWarning,
		// About the online pods' own limits, which their owners size.
		Profile: ProfileFull,
		Summary: "Online pods on node {{ $labels.node }} use {{ $value | humanizePercentage }} of their CPU limits",
		Description: fmt.Sprintf("Online pods on node {{ $labels.node }}, which also runs offline work, have used more than %.0f%% of their summed CPU limits for %s ", NearLimitRatio*100, words(NearLimitFor)) +
			"({{ $value | humanizePercentage }}): they are being throttled or soon will be, and offline work competes with them for the node.",
	}
}

// onlineMemoryNearLimit is onlineCPUNearLimit for the working set.
func onlineMemoryNearLimit() Alert {
	return Alert{
		Name:     "BackfillOnlineMemoryNearLimit",
		Expr:     nearLimit(expr.OnlineMemoryUsedByNode(), "memory"),
		For:      NearLimitFor,
		Severity: SeverityWarning,
		// About the online pods' own limits, which their owners size.
		Profile: ProfileFull,
		Summary: "Online pods on node {{ $labels.node }} use {{ $value | humanizePercentage }} of their memory limits",
		Description: fmt.Sprintf("Online pods on node {{ $labels.node }}, which also runs offline work, have had a working set above %.0f%% of their summed memory limits for %s ", NearLimitRatio*100, words(NearLimitFor)) +
			"({{ $value | humanizePercentage }}): they risk being OOM-killed.",
	}
}

// nearLimit divides the online use of a node by its online limits, on
// nodes with offline work and online limits set (a node whose online pods
// set no limit has nothing to be close to).
func nearLimit(used, resource string) string {
	limits := fmt.Sprintf(`max by (node) (%s{tier="online",resource=%q}) > 0`, metrics.NameNodeLimits, resource)
	return fmt.Sprintf("(%s) / on (node) (%s) > %v and on (node) %s", used, limits, NearLimitRatio, expr.NodesWithOfflineWork())
}

// words spells a whole number of minutes for people, e.g. "30 minutes".
func words(d time.Duration) string {
	return fmt.Sprintf("%d minutes", int(d.Minutes()))
}
