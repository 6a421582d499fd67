package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// The cockpit's row on GPUs that online pods hold but leave idle
// (dcgm-exporter's utilisation below expr.GPUIdleUtilPercent): per online
// workload, what it holds, how much of it idles and for how long over a
// day, and when. It is the evidence an online team needs to scale down
// at night, so that training can borrow the GPUs.

// GPUIdleRowTitle is the title of the cockpit's idle online GPUs row.
const GPUIdleRowTitle = "Do online pods leave their GPUs idle?"

// gpuIdleTrendWindow is the window of the trend panel's average: an hour
// of idling, not a quiet minute.
const gpuIdleTrendWindow = "1h"

// byWorkload aggregates a per-GPU expression of online pods by workload
// (expr.ByWorkload).
func byWorkload(aggregation, byGPU string) string {
	return aggregation + " by (workload) (" + expr.ByWorkload(byGPU) + ")"
}

// idleGPUs keeps the GPUs online pods hold now whose average over window
// is below expr.GPUIdleUtilPercent.
func idleGPUs(window string) string {
	return fmt.Sprintf("(%s) < %d", expr.OnlineGPUAvgUtilByGPUOver(window), expr.GPUIdleUtilPercent)
}

// OnlineGPUIdleColumns are the columns of the idle online GPUs table,
// one row per online workload ("namespace/owner") that holds GPUs now
// or held one idle in the last day.
func OnlineGPUIdleColumns() []Column {
	idleHours := expr.OnlineGPUIdleHoursByGPUOver(expr.GPUIdleHoursWindow)
	return []Column{
		{Name: "GPUs held", Unit: UnitCount, Expr: byWorkload("count", expr.OnlineGPUUtilByGPU())},
		{Name: fmt.Sprintf("GPUs idle (%s average < %d%%)", expr.GPUIdleAvgWindow, expr.GPUIdleUtilPercent), Unit: UnitCount,
			Expr: byWorkload("count", idleGPUs(expr.GPUIdleAvgWindow))},
		{Name: fmt.Sprintf("GPU utilisation (%s average)", expr.GPUIdleAvgWindow), Unit: UnitPercent,
			Expr: byWorkload("avg", expr.OnlineGPUAvgUtilByGPUOver(expr.GPUIdleAvgWindow))},
		{Name: fmt.Sprintf("GPU-hours idle (%s)", expr.GPUIdleHoursWindow), Unit: UnitHours, Expr: byWorkload("sum", idleHours)},
		{Name: fmt.Sprintf("Most idle GPU (%s)", expr.GPUIdleHoursWindow), Unit: UnitHours, Expr: byWorkload("max", idleHours)},
	}
}

// OnlineGPUIdleTrend is the query of the trend panel: per online
// workload, the GPUs it held at each time whose last hour averaged below
// expr.GPUIdleUtilPercent.
func OnlineGPUIdleTrend() []Query {
	return []Query{{Expr: byWorkload("count", idleGPUs(gpuIdleTrendWindow)), Legend: "{{workload}}"}}
}

// gpuIdleRow opens the row; its panels follow it on the grid.
func gpuIdleRow(id uint32, y uint32) *dashboard.RowBuilder {
	return dashboard.NewRowBuilder(GPUIdleRowTitle).Id(id).GridPos(grid(0, y, 24, 1)).Collapsed(false)
}

// gpuIdleDescription says how the row's panels read the GPUs.
var gpuIdleDescription = fmt.Sprintf("A GPU is idle while dcgm-exporter's DCGM_FI_DEV_GPU_UTIL reads below %d%%; online pods are every pod that is not offline (backfill_offline_pod_info), "+
	"the exporter's own pod aside, whatever the time each reading was taken at. A workload is namespace/owner, the owner named from the pod's name as Kubernetes names generated pods "+
	"(web-7d4b9c8f6-x2x45 of Deployment web, infer-0 of StatefulSet infer). ", expr.GPUIdleUtilPercent)

// gpuIdleTablePanel: per online workload, GPUs held, idle, and for how
// long.
func gpuIdleTablePanel(id uint32, pos dashboard.GridPos) *table.PanelBuilder {
	return tablePanel(id, "GPUs held idle by online workloads",
		gpuIdleDescription+
			fmt.Sprintf("Per workload: the GPUs its pods hold now, those of them whose last %s averaged below %d%%, their average utilisation, ", expr.GPUIdleAvgWindow, expr.GPUIdleUtilPercent)+
			fmt.Sprintf("and over the last %s the GPU-hours its pods held a GPU idle (pods since gone included) and the hours one GPU sat idle, the most of any (in all, not in one spell). ", expr.GPUIdleHoursWindow)+
			"Hours of idle GPUs every night are what scaling the workload down at night (a KEDA cron trigger, the HPA's minimum) would lend to training; "+
			"`backfill doctor` (check gpu-idle-online) names the workloads.",
		pos, "workload", OnlineGPUIdleColumns())
}

// gpuIdleTrendPanel: when online workloads leave their GPUs idle.
func gpuIdleTrendPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "Online GPUs idle for an hour, per workload",
		gpuIdleDescription+
			fmt.Sprintf("At each time, the GPUs each workload's pods held whose last %s averaged below %d%%: over a few days, the nights a workload could lend its GPUs to training.", gpuIdleTrendWindow, expr.GPUIdleUtilPercent),
		UnitCount, pos, OnlineGPUIdleTrend()).
		Min(0)
}
