package expr

import "fmt"

// The GPU loans' metrics (internal/gpuloan, internal/metrics), one series
// per GPU pool (label pool: the model of its nodes' GPUs), exported by the
// leader from its first decision on a cluster with GPU nodes.
const (
	// MetricGPULoanLent is the GPUs of a pool training holds on loan.
	MetricGPULoanLent = "backfill_gpu_loan_lent_gpus"
	// MetricGPULoanNextReturn is when a pool's next loan must be back, in
	// Unix seconds; absent while no loan must end within the forecast.
	MetricGPULoanNextReturn = "backfill_gpu_loan_next_return_timestamp_seconds"
	// MetricGPULoanReturns counts the loans given back, by outcome.
	MetricGPULoanReturns = "backfill_gpu_loan_returns_total"
	// MetricGPULoanMissedReturns counts the online pods found waiting for
	// a GPU while training held GPUs of their pool.
	MetricGPULoanMissedReturns = "backfill_gpu_loan_missed_returns_total"
	// MetricGPULoanOnlineWait is the seconds those pods waited, summed.
	MetricGPULoanOnlineWait = "backfill_gpu_loan_online_wait_seconds_total"
	// MetricGPULoanGPUSeconds is the GPU-seconds training held on loan;
	// MetricGPULoanLostGPUSeconds those of its work the returns undid.
	MetricGPULoanGPUSeconds     = "backfill_gpu_loan_gpu_seconds_total"
	MetricGPULoanLostGPUSeconds = "backfill_gpu_loan_lost_gpu_seconds_total"
)

// The outcome label values of MetricGPULoanReturns.
const (
	GPULoanOnTime = "on_time"
	GPULoanLate   = "late"
)

// GPULoanLentByPool is the GPUs training holds on loan in each pool now,
// labelled pool: max, not sum, so that a former leader still scraped
// during a leader change does not count the loans twice.
func GPULoanLentByPool() string {
	return "max by (pool) (" + MetricGPULoanLent + ")"
}

// GPULoanNextReturnInByPool is the seconds until each pool's next loan
// must be back with online work, labelled pool (negative once the
// deadline passed and the loan is not back yet); pools with no loan to
// end within the forecast have no series.
func GPULoanNextReturnInByPool() string {
	return "min by (pool) (" + MetricGPULoanNextReturn + ") - time()"
}

// GPULoanReturnsByPoolOver is the loans of each pool given back with an
// outcome (GPULoanOnTime, GPULoanLate) within window, labelled pool.
// Counters of several manager replicas add up: each counts its own.
func GPULoanReturnsByPoolOver(outcome, window string) string {
	return fmt.Sprintf("sum by (pool) (increase(%s{outcome=%q}[%s]))", MetricGPULoanReturns, outcome, window)
}

// GPULoanMissedReturnsByPoolOver is the online pods of each pool found
// waiting for a GPU training held, within window, labelled pool.
func GPULoanMissedReturnsByPoolOver(window string) string {
	return fmt.Sprintf("sum by (pool) (increase(%s[%s]))", MetricGPULoanMissedReturns, window)
}

// GPULoanOnlineWaitByPoolOver is the seconds online pods of each pool
// waited for a GPU training held, within window, summed over the pods,
// labelled pool.
func GPULoanOnlineWaitByPoolOver(window string) string {
	return fmt.Sprintf("sum by (pool) (increase(%s[%s]))", MetricGPULoanOnlineWait, window)
}

// GPULoanGPUHoursByPoolOver is the GPU-hours training held on loan in
// each pool within window, labelled pool.
func GPULoanGPUHoursByPoolOver(window string) string {
	return fmt.Sprintf("sum by (pool) (increase(%s[%s])) / 3600", MetricGPULoanGPUSeconds, window)
}

// GPULoanLostGPUHoursByPoolOver is the GPU-hours of training each pool's
// returns undid within window, labelled pool.
func GPULoanLostGPUHoursByPoolOver(window string) string {
	return fmt.Sprintf("sum by (pool) (increase(%s[%s])) / 3600", MetricGPULoanLostGPUSeconds, window)
}

// GPULoanOnlineWaitingByPoolOver is how many online pods of each pool
// waited for a GPU training held, on average over window (seconds waited
// per second), labelled pool.
func GPULoanOnlineWaitingByPoolOver(window string) string {
	return fmt.Sprintf("sum by (pool) (rate(%s[%s]))", MetricGPULoanOnlineWait, window)
}
