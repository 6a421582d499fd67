package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The GPU loans' metrics' names (internal/gpuloan), one series per GPU
// pool: the model of its nodes' GPUs (nvidia.com/gpu.product), or
// PoolUnlabelled.
const (
	NameGPULoanLent          = "backfill_gpu_loan_lent_gpus"
	NameGPULoanNextReturn    = "backfill_gpu_loan_next_return_timestamp_seconds"
	NameGPULoanLendableUntil = "backfill_gpu_loan_lendable_until_timestamp_seconds"
	NameGPULoanReturns       = "backfill_gpu_loan_returns_total"
	NameGPULoanMissedReturns = "backfill_gpu_loan_missed_returns_total"
	NameGPULoanOnlineWait    = "backfill_gpu_loan_online_wait_seconds_total"
	NameGPULoanGPUSeconds    = "backfill_gpu_loan_gpu_seconds_total"
	NameGPULoanLostSeconds   = "backfill_gpu_loan_lost_gpu_seconds_total"
)

// Return outcomes, the values of backfill_gpu_loan_returns_total's outcome
// label.
const (
	// ReturnOnTime: the job had its whole checkpoint time of notice and no
	// online pod waited for the GPUs it held.
	ReturnOnTime = "on_time"
	// ReturnLate: the notice was shorter than the job's checkpoint time
	// (online needed the GPUs sooner than forecast), or online pods waited
	// for GPUs the job still held.
	ReturnLate = "late"
)

// ReturnOutcomes are the values of the outcome label.
var ReturnOutcomes = []string{ReturnOnTime, ReturnLate}

var (
	gpuLoanLent = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameGPULoanLent,
		Help: "GPUs of a pool that training jobs hold on loan from online work, by pool (the nodes' GPU model).",
	}, []string{"pool"})
	gpuLoanNextReturn = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameGPULoanNextReturn,
		Help: "When the next loan of a pool must be back with online work, in Unix seconds; absent when no loan must end within the forecast.",
	}, []string{"pool"})
	gpuLoanLendableUntil = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameGPULoanLendableUntil,
		Help: "Until when the GPUs of a pool free now stay free to lend, in Unix seconds (the end of the forecast when longer): a new job starts on them only if that leaves it time to reach a checkpoint and write one. Absent when none is free or the pool has no forecast.",
	}, []string{"pool"})
	gpuLoanReturns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameGPULoanReturns,
		Help: "Loans a training job gave back to online work (the job paused), by pool and outcome: on_time, or late (notice shorter than the job's checkpoint time, or online pods waited for its GPUs).",
	}, []string{"pool", "outcome"})
	gpuLoanMissedReturns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameGPULoanMissedReturns,
		Help: "Online pods found Pending for a GPU of a pool while training held GPUs there: a return the forecast missed (the scheduler's preemption still gives online the GPU).",
	}, []string{"pool"})
	gpuLoanOnlineWait = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameGPULoanOnlineWait,
		Help: "Seconds online pods waited unscheduled for a GPU of a pool while training held GPUs there, summed over the pods.",
	}, []string{"pool"})
	gpuLoanGPUSeconds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameGPULoanGPUSeconds,
		Help: "GPU-seconds training held on loan in a pool: the GPUs lent at each decision times the time since the one before.",
	}, []string{"pool"})
	gpuLoanLostSeconds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameGPULoanLostSeconds,
		Help: "GPU-seconds of training a pool's returns undid: for a job paused without a checkpoint after its notice, its GPUs times the time since its last checkpoint (or its loan's start).",
	}, []string{"pool"})
)

// GPULoanPool records a pool's loans at a decision: the GPUs lent, when
// the next must be back and until when the free GPUs may be lent (zero:
// none within the forecast, none free).
func GPULoanPool(pool string, lent int, nextReturn, lendableUntil time.Time) {
	gpuLoanLent.WithLabelValues(pool).Set(float64(lent))
	setTimestamp(gpuLoanNextReturn, pool, nextReturn)
	setTimestamp(gpuLoanLendableUntil, pool, lendableUntil)
	// The counters start at zero, so that rate() sees their first increment.
	for _, o := range ReturnOutcomes {
		gpuLoanReturns.WithLabelValues(pool, o)
	}
	gpuLoanMissedReturns.WithLabelValues(pool)
	gpuLoanOnlineWait.WithLabelValues(pool)
	gpuLoanGPUSeconds.WithLabelValues(pool)
	gpuLoanLostSeconds.WithLabelValues(pool)
}

// GPULoanPoolGone forgets a pool whose nodes are gone.
func GPULoanPoolGone(pool string) {
	gpuLoanLent.DeleteLabelValues(pool)
	gpuLoanNextReturn.DeleteLabelValues(pool)
	gpuLoanLendableUntil.DeleteLabelValues(pool)
	for _, o := range ReturnOutcomes {
		gpuLoanReturns.DeleteLabelValues(pool, o)
	}
	gpuLoanMissedReturns.DeleteLabelValues(pool)
	gpuLoanOnlineWait.DeleteLabelValues(pool)
	gpuLoanGPUSeconds.DeleteLabelValues(pool)
	gpuLoanLostSeconds.DeleteLabelValues(pool)
}

// GPULoanReturned counts a loan given back; outcome is ReturnOnTime or
// ReturnLate.
func GPULoanReturned(pool, outcome string) { gpuLoanReturns.WithLabelValues(pool, outcome).Inc() }

// GPULoanMissedReturn counts an online pod found waiting for a GPU that
// training held.
func GPULoanMissedReturn(pool string) { gpuLoanMissedReturns.WithLabelValues(pool).Inc() }

// GPULoanOnlineWaited adds time online pods waited for a GPU of a pool.
func GPULoanOnlineWaited(pool string, waited time.Duration) {
	gpuLoanOnlineWait.WithLabelValues(pool).Add(waited.Seconds())
}

// GPULoanHeld adds the GPU-seconds a pool's loans held since the last
// decision.
func GPULoanHeld(pool string, gpus int, d time.Duration) {
	gpuLoanGPUSeconds.WithLabelValues(pool).Add(float64(gpus) * d.Seconds())
}

// GPULoanLost adds the GPU-seconds of training a return undid.
func GPULoanLost(pool string, gpus int, d time.Duration) {
	gpuLoanLostSeconds.WithLabelValues(pool).Add(float64(gpus) * d.Seconds())
}

// setTimestamp sets a pool's timestamp gauge, or removes it for zero.
func setTimestamp(g *prometheus.GaugeVec, pool string, t time.Time) {
	if t.IsZero() {
		g.DeleteLabelValues(pool)
		return
	}
	g.WithLabelValues(pool).Set(float64(t.Unix()))
}
