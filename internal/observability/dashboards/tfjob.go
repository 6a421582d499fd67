package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// jobSelector matches the one TFJob the dashboard's variables pick.
const jobSelector = `namespace="$namespace",tfjob="$tfjob"`

// The panel ids of the TFJob dashboard.
const (
	tfjobPhaseID       uint32 = 1
	tfjobRestartsID    uint32 = 2
	tfjobDisruptionsID uint32 = 3
	tfjobToRunningID   uint32 = 4
	tfjobReplicasID    uint32 = 5
	tfjobGoodputID     uint32 = 6
	tfjobGPUID         uint32 = 10
	tfjobCPUID         uint32 = 11
	tfjobCausesID      uint32 = 12
	tfjobGPUMemoryID   uint32 = 13
	tfjobGPUFullID     uint32 = 14
)

// TFJobQueries are the queries of the TFJob dashboard's panels other than
// the GPU library panel, by panel title.
func TFJobQueries() map[string]Query {
	return map[string]Query{
		"Phase":                           {Expr: "max by (phase) (backfill_tfjob_info{" + jobSelector + "})", Legend: "{{phase}}"},
		"Restarts":                        {Expr: "max(backfill_tfjob_restarts{" + jobSelector + "})", Legend: "restarts"},
		"Disruptions":                     {Expr: "max(backfill_tfjob_disruptions{" + jobSelector + "})", Legend: "disruptions"},
		"Time to running":                 {Expr: "max(backfill_tfjob_running_timestamp_seconds{" + jobSelector + "} - backfill_tfjob_created_timestamp_seconds{" + jobSelector + "})", Legend: "time to running"},
		"Replicas":                        {Expr: "max by (replica_type, state) (backfill_tfjob_replicas{" + jobSelector + "})", Legend: "{{replica_type}} {{state}}"},
		"CPU per replica":                 {Expr: cpuPerReplica(), Legend: "{{replica_type}} {{pod}}"},
		"Goodput":                         JobGoodput(),
		"Goodput: time by cause":          JobGoodputByCause(),
		"GPU memory used per TFJob pod":   GPUMemoryUsedByTFJobPod(),
		"GPU memory in use per TFJob pod": GPUMemoryFullByTFJobPod(),
	}
}

// cpuPerReplica is the CPU each pod of the job uses, labelled with its
// replica type through the offline pod info series.
func cpuPerReplica() string {
	return fmt.Sprintf(
		`sum by (replica_type, pod) (sum by (namespace, pod) (rate(%s{%s,namespace="$namespace"}[%s])) * on (namespace, pod) group_left (replica_type) max by (namespace, pod, replica_type) (%s{%s}))`,
		expr.MetricCPUUsage, expr.ContainerSelector, rateInterval, expr.MetricOfflinePodInfo, jobSelector)
}

// TFJob is the dashboard of one TFJob: its phase, replicas, restarts and
// disruptions, how long it took to run, how much of its life trained
// productively, and what its replicas use, GPU memory included.
func TFJob() (Built, error) {
	q := TFJobQueries()
	//nolint:staticcheck // the classic schema on purpose: see doc.go
	b := dashboard.NewDashboardBuilder("backfill: TFJob").
		Uid("backfill-tfjob").
		Description("One TFJob: phase, replicas, restarts and disruptions, time to running, goodput, GPU, GPU memory and CPU use per replica.").
		Tags([]string{"backfill", "tfjob"}).
		Readonly().
		Refresh("30s").
		Time("now-3h", "now").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(datasourceVariable()).
		WithVariable(labelValuesVariable(VarNamespace, "namespace", "backfill_tfjob_info")).
		WithVariable(labelValuesVariable(VarTFJob, "tfjob", `backfill_tfjob_info{namespace="$namespace"}`))

	b.WithPanel(statPanel(tfjobPhaseID, "Phase",
		"The TFJob's phase as backfill_tfjobs counts it: Created, Running, Restarting, Succeeded, Failed or Suspended.",
		UnitCount, grid(0, 0, 4, 4), q["Phase"]).TextMode(common.BigValueTextModeName))
	b.WithPanel(statPanel(tfjobRestartsID, "Restarts",
		"Times the job restarted a replica after a failure (status.restarts); disruptions are not counted here.",
		UnitCount, grid(4, 0, 3, 4), q["Restarts"]))
	b.WithPanel(statPanel(tfjobDisruptionsID, "Disruptions",
		"Times online work took the job's pods back (preemption, eviction, node drain); the job resumed from its checkpoint without counting them as failures.",
		UnitCount, grid(7, 0, 3, 4), q["Disruptions"]))
	b.WithPanel(statPanel(tfjobToRunningID, "Time to running",
		"From the TFJob's creation to the last time it entered Running (its Running condition's lastTransitionTime): waiting for capacity, gang scheduling and pulling images, and, after a restart, everything until it ran again.",
		UnitSeconds, grid(10, 0, 4, 4), q["Time to running"]))
	b.WithPanel(goodputStat(tfjobGoodputID, "Goodput",
		"The share of the TFJob's life so far that trained productively and kept its progress (backfill_tfjob_goodput_seconds): "+
			"productive time over all of it, waiting for capacity, recovery from disruptions and progress a disruption undid included. "+
			"Goodput: time by cause shows where the rest went.",
		grid(14, 0, 3, 4), q["Goodput"]))
	b.WithPanel(statPanel(tfjobReplicasID, "Replicas",
		"Pods of each replica type by state: desired, active, succeeded, failed.",
		UnitCount, grid(17, 0, 7, 4), q["Replicas"]).TextMode(common.BigValueTextModeValueAndName))

	uses := []libraryUse{{panelID: tfjobGPUID, panel: GPUPerPodPanel()}}
	b.WithPanel(uses[0].panel.build(tfjobGPUID, grid(0, 4, 12, 9)))
	b.WithPanel(timeSeriesPanel(tfjobCPUID, "CPU per replica",
		"CPU cores each pod of the job uses, from the kubelet's per-container usage.",
		UnitCores, grid(12, 4, 12, 9), []Query{q["CPU per replica"]}).Min(0))
	b.WithPanel(goodputByCausePanel(tfjobCausesID, grid(0, 13, 8, 9)))
	b.WithPanel(gpuMemoryUsedPanel(tfjobGPUMemoryID, grid(8, 13, 8, 9)))
	b.WithPanel(gpuMemoryFullPanel(tfjobGPUFullID, grid(16, 13, 8, 9)))

	d, err := b.Build()
	if err != nil {
		return Built{}, fmt.Errorf("building the TFJob dashboard: %w", err)
	}
	return Built{Name: "backfill-tfjob", Dashboard: d, library: uses}, nil
}
