package rules

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Series of the GPU loan alerts, as the manager's leader exports them from
// its first decision: every counter of a pool at zero, then counting;
// 200 samples at 15s cover 50 minutes.
const (
	// One late return, one on time, and one online pod found waiting for
	// a GPU of pool A100 at minute 10; none in pool L4.
	a100LateAt10m   = `backfill_gpu_loan_returns_total{pool="NVIDIA-A100-SXM4-80GB",outcome="late"} 0x40 1x160`
	a100OnTimeAt10m = `backfill_gpu_loan_returns_total{pool="NVIDIA-A100-SXM4-80GB",outcome="on_time"} 0x40 1x160`
	a100OnTimeNone  = `backfill_gpu_loan_returns_total{pool="NVIDIA-A100-SXM4-80GB",outcome="on_time"} 0x200`
	a100LateNone    = `backfill_gpu_loan_returns_total{pool="NVIDIA-A100-SXM4-80GB",outcome="late"} 0x200`
	a100MissedAt10m = `backfill_gpu_loan_missed_returns_total{pool="NVIDIA-A100-SXM4-80GB"} 0x40 1x160`
	a100MissedNone  = `backfill_gpu_loan_missed_returns_total{pool="NVIDIA-A100-SXM4-80GB"} 0x200`
	l4LateNone      = `backfill_gpu_loan_returns_total{pool="NVIDIA-L4",outcome="late"} 0x200`
	l4MissedNone    = `backfill_gpu_loan_missed_returns_total{pool="NVIDIA-L4"} 0x200`
)

func TestGPULoanAlerts(t *testing.T) {
	late := firing{
		Labels: map[string]string{"alertname": "BackfillGPULoanReturnedLate", "severity": "warning", "pool": "NVIDIA-A100-SXM4-80GB"},
		Annotations: annotations("backfillgpuloanreturnedlate", "GPU loans of pool NVIDIA-A100-SXM4-80GB came back to online work late",
			"In the last hour, 1 of the loans of GPU pool NVIDIA-A100-SXM4-80GB came back to online work late: "+
				"their jobs had less notice than their checkpoint time (online needed the GPUs sooner than forecast), or online pods waited for GPUs they still held. "+
				"A job paused before its checkpoint loses the work since its last one."),
	}
	missed := firing{
		Labels: map[string]string{"alertname": "BackfillGPULoanMissedReturn", "severity": "warning", "pool": "NVIDIA-A100-SXM4-80GB"},
		Annotations: annotations("backfillgpuloanmissedreturn", "Online pods waited for GPUs of pool NVIDIA-A100-SXM4-80GB that training held",
			"In the last hour, online pods were found waiting for a GPU of pool NVIDIA-A100-SXM4-80GB while training held GPUs there (1 of them): "+
				"the forecast missed a rise of online demand (an unplanned spike, a schedule or a history that rises later than the workload does, a warm-up longer than stated). "+
				"The scheduler's preemption still gives them the GPUs, but they waited for them."),
	}

	cases := map[string]struct {
		series []string
		at     time.Duration
		alert  string
		want   []firing
	}{
		"a late return": {
			series: []string{a100LateAt10m, a100OnTimeNone, l4LateNone},
			at:     20 * time.Minute, alert: "BackfillGPULoanReturnedLate", want: []firing{late},
		},
		"a late return, manager scraped by a ServiceMonitor": {
			series: []string{scrapedByServiceMonitor(a100LateAt10m), scrapedByServiceMonitor(l4LateNone)},
			at:     20 * time.Minute, alert: "BackfillGPULoanReturnedLate", want: []firing{late},
		},
		// The minute after it: no `for:` to wait out.
		"a late return a minute ago": {
			series: []string{a100LateAt10m},
			at:     11 * time.Minute, alert: "BackfillGPULoanReturnedLate", want: []firing{late},
		},
		"returns on time only: silent": {
			series: []string{a100OnTimeAt10m, a100LateNone, l4LateNone},
			at:     20 * time.Minute, alert: "BackfillGPULoanReturnedLate",
		},
		"counters at zero, as from the first decision: silent": {
			series: []string{a100OnTimeNone, a100LateNone, l4LateNone},
			at:     40 * time.Minute, alert: "BackfillGPULoanReturnedLate",
		},
		// A manager that restarts counts from zero again: a reset, no return.
		"the manager restarted: silent": {
			series: []string{`backfill_gpu_loan_returns_total{pool="NVIDIA-A100-SXM4-80GB",outcome="late"} 1x40 0x160`},
			at:     20 * time.Minute, alert: "BackfillGPULoanReturnedLate",
		},
		"a late return more than an hour ago: silent": {
			series: []string{`backfill_gpu_loan_returns_total{pool="NVIDIA-A100-SXM4-80GB",outcome="late"} 0x40 1x360`},
			at:     80 * time.Minute, alert: "BackfillGPULoanReturnedLate",
		},
		"an online pod waited for a GPU training held": {
			series: []string{a100MissedAt10m, l4MissedNone},
			at:     20 * time.Minute, alert: "BackfillGPULoanMissedReturn", want: []firing{missed},
		},
		"a missed return, manager scraped by a ServiceMonitor": {
			series: []string{scrapedByServiceMonitor(a100MissedAt10m), scrapedByServiceMonitor(l4MissedNone)},
			at:     20 * time.Minute, alert: "BackfillGPULoanMissedReturn", want: []firing{missed},
		},
		// A late return whose online pods did not wait is no missed return.
		"a late return without online pods waiting: silent": {
			series: []string{a100LateAt10m, a100MissedNone, l4MissedNone},
			at:     20 * time.Minute, alert: "BackfillGPULoanMissedReturn",
		},
		"no online pod waited: silent": {
			series: []string{a100MissedNone, l4MissedNone},
			at:     40 * time.Minute, alert: "BackfillGPULoanMissedReturn",
		},
		"a missed return more than an hour ago: silent": {
			series: []string{`backfill_gpu_loan_missed_returns_total{pool="NVIDIA-A100-SXM4-80GB"} 0x40 1x360`},
			at:     80 * time.Minute, alert: "BackfillGPULoanMissedReturn",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := firingAt(t, tc.series, tc.at)
			if diff := cmp.Diff(tc.want, got[tc.alert]); diff != "" {
				t.Errorf("%s firing at %v (-want +got):\n%s", tc.alert, tc.at, diff)
			}
		})
	}
}
