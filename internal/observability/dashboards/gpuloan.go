package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// The cockpit's row on GPU loans (internal/gpuloan): per GPU pool, the
// GPUs training holds on loan from online work, how long until the next
// must be back, and whether the returns came in time, or online pods
// waited for GPUs training still held.

// GPULoanRowTitle is the title of the cockpit's GPU loans row.
const GPULoanRowTitle = "GPUs lent to training tonight"

// dashboardRange is Grafana's time range of the dashboard, as a window:
// the loans' table counts its returns over it.
const dashboardRange = "$__range"

// GPULoansLent is the query of the GPUs lent panels, one series per pool.
func GPULoansLent() Query {
	return Query{Expr: expr.GPULoanLentByPool(), Legend: "{{pool}}"}
}

// GPULoanNextReturn is the query of the next return panel: the seconds
// until each pool's next loan must be back, for pools with one to make.
func GPULoanNextReturn() Query {
	return Query{Expr: expr.GPULoanNextReturnInByPool(), Legend: "{{pool}}"}
}

// GPULoanColumns are the columns of the loans' table, one row per pool:
// what happened over the dashboard's time range. Counts are rounded: an
// increase extrapolates to the range's ends.
func GPULoanColumns() []Column {
	count := func(e string) string { return "round(" + e + ")" }
	return []Column{
		{Name: "Returned on time", Unit: UnitCount, Expr: count(expr.GPULoanReturnsByPoolOver(expr.GPULoanOnTime, dashboardRange))},
		{Name: "Returned late", Unit: UnitCount, Expr: count(expr.GPULoanReturnsByPoolOver(expr.GPULoanLate, dashboardRange))},
		{Name: "Missed returns", Unit: UnitCount, Expr: count(expr.GPULoanMissedReturnsByPoolOver(dashboardRange))},
		{Name: "Online wait", Unit: UnitSeconds, Expr: expr.GPULoanOnlineWaitByPoolOver(dashboardRange)},
		{Name: "GPU-hours lent", Unit: UnitHours, Expr: expr.GPULoanGPUHoursByPoolOver(dashboardRange)},
		{Name: "GPU-hours lost", Unit: UnitHours, Expr: expr.GPULoanLostGPUHoursByPoolOver(dashboardRange)},
	}
}

// GPULoanOnlineWaiting is the query of the online wait panel.
func GPULoanOnlineWaiting() Query {
	return Query{Expr: expr.GPULoanOnlineWaitingByPoolOver(rateInterval), Legend: "{{pool}}"}
}

// gpuLoanDescription says what the row's panels read.
const gpuLoanDescription = "GPU loans (backfill manager --gpu-loans): training borrows whole GPUs that online inference leaves idle and gives them back, " +
	"with a stop notice as long as its checkpoint, before the online forecast (a KEDA cron trigger, the backfill.dev/gpu-schedule annotation, the workload's history) needs them. " +
	"A pool is the GPU nodes of one model (nvidia.com/gpu.product). Its series exist once the manager has decided for a cluster with GPU nodes; " +
	"only pools where an online workload has a forecast have their loans returned. "

// gpuLoanRow opens the row; its panels follow it on the grid.
func gpuLoanRow(id uint32, y uint32) *dashboard.RowBuilder {
	return dashboard.NewRowBuilder(GPULoanRowTitle).Id(id).GridPos(grid(0, y, 24, 1)).Collapsed(false)
}

// gpuLoanLentStat: the GPUs lent per pool now.
func gpuLoanLentStat(id uint32, pos dashboard.GridPos) *stat.PanelBuilder {
	return statPanel(id, "GPUs lent to training now", gpuLoanDescription+
		"Per pool, the GPUs that TFJob pods hold on loan from online work now (backfill_gpu_loan_lent_gpus).",
		UnitCount, pos, GPULoansLent())
}

// gpuLoanNextReturnStat: how long until each pool's next return.
func gpuLoanNextReturnStat(id uint32, pos dashboard.GridPos) *stat.PanelBuilder {
	return statPanel(id, "Next return to online, in", gpuLoanDescription+
		"Per pool, the time until its next loan must be back with online work (backfill_gpu_loan_next_return_timestamp_seconds minus now): "+
		"the job gets its stop notice a checkpoint's time before. Negative: the deadline passed and the job still holds the GPUs. "+
		"No value: no loan of the pool must end within the forecast.",
		UnitSeconds, pos, GPULoanNextReturn())
}

// gpuLoanLentTrend: the GPUs lent per pool over time.
func gpuLoanLentTrend(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "GPUs lent to training, per pool", gpuLoanDescription+
		"Per pool, the GPUs TFJob pods held on loan at each time: they rise as online work scales down at night and fall before it scales up.",
		UnitCount, pos, []Query{GPULoansLent()}).
		Min(0)
}

// gpuLoanReturnsTable: per pool, the returns over the dashboard's range.
func gpuLoanReturnsTable(id uint32, pos dashboard.GridPos) *table.PanelBuilder {
	return tablePanel(id, "Loans over the time range, per pool", gpuLoanDescription+
		"Per pool, over the dashboard's time range: loans given back on time (the job had its whole checkpoint time of notice), "+
		"late (a shorter notice, as online needed the GPUs sooner than forecast, or online pods waited for GPUs the job still held), "+
		"missed returns (online pods found waiting for a GPU while training held GPUs of the pool: the forecast missed a rise; "+
		"the scheduler's preemption still gives online the GPU), the seconds those pods waited, summed, "+
		"and the night's goodput: the GPU-hours training held on loan, and those of its work the returns undid "+
		"(a job paused without a checkpoint after its notice loses what it did since its last one). "+
		"Late and missed returns are what the alerts BackfillGPULoanReturnedLate and BackfillGPULoanMissedReturn report.",
		pos, "pool", GPULoanColumns())
}

// gpuLoanOnlineWaitTrend: online pods waiting for a GPU training holds.
func gpuLoanOnlineWaitTrend(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "Online pods waiting for a GPU training holds", gpuLoanDescription+
		"Per pool, how many online pods waited unscheduled for a GPU while training held GPUs there, on average "+
		"(seconds waited per second, backfill_gpu_loan_online_wait_seconds_total; the manager adds them at each decision, every --gpu-loan-interval). "+
		"Anything above zero is online work kept waiting by a loan.",
		UnitSecondsPerSecond, pos, []Query{GPULoanOnlineWaiting()}).
		Min(0)
}
