package rules

import (
	"time"

	"github.com/prometheus/common/model"

	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// GPULoanReturnWindow is how long the GPU loan alerts look back for a late
// or missed return: each is one event at a pool's morning return, so the
// alert fires at once, without `for:`, and resolves an hour later.
const GPULoanReturnWindow = time.Hour

// gpuLoanReturnedLate: a loan of a pool came back late, within
// GPULoanReturnWindow.
func gpuLoanReturnedLate() Alert {
	return Alert{
		Name:     "BackfillGPULoanReturnedLate",
		Expr:     expr.GPULoanReturnsByPoolOver(expr.GPULoanLate, model.Duration(GPULoanReturnWindow).String()) + " > 0",
		Severity: SeverityWarning,
		// A tuning signal of the forecast and the jobs' checkpoints; when
		// online pods waited, BackfillGPULoanMissedReturn, essential, says so.
		Profile: ProfileFull,
		Summary: "GPU loans of pool {{ $labels.pool }} came back to online work late",
		Description: "In the last hour, {{ $value | printf \"%.0f\" }} of the loans of GPU pool {{ $labels.pool }} came back to online work late: " +
			"their jobs had less notice than their checkpoint time (online needed the GPUs sooner than forecast), or online pods waited for GPUs they still held. " +
			"A job paused before its checkpoint loses the work since its last one.",
	}
}

// gpuLoanMissedReturn: online pods waited for a GPU of a pool while
// training held GPUs there, within GPULoanReturnWindow.
func gpuLoanMissedReturn() Alert {
	return Alert{
		Name:     "BackfillGPULoanMissedReturn",
		Expr:     expr.GPULoanMissedReturnsByPoolOver(model.Duration(GPULoanReturnWindow).String()) + " > 0",
		Severity: SeverityWarning,
		// Online services harmed: their pods waited for GPUs lent to training.
		Profile: ProfileEssential,
		Summary: "Online pods waited for GPUs of pool {{ $labels.pool }} that training held",
		Description: "In the last hour, online pods were found waiting for a GPU of pool {{ $labels.pool }} while training held GPUs there ({{ $value | printf \"%.0f\" }} of them): " +
			"the forecast missed a rise of online demand (an unplanned spike, a schedule or a history that rises later than the workload does, a warm-up longer than stated). " +
			"The scheduler's preemption still gives them the GPUs, but they waited for them.",
	}
}
