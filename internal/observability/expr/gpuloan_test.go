package expr_test

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// TestGPULoanMetricNames keeps the names and outcomes the fragments read in
// step with what the manager exports.
func TestGPULoanMetricNames(t *testing.T) {
	for got, want := range map[string]string{
		expr.MetricGPULoanLent: metrics.NameGPULoanLent, expr.MetricGPULoanNextReturn: metrics.NameGPULoanNextReturn,
		expr.MetricGPULoanReturns: metrics.NameGPULoanReturns, expr.MetricGPULoanMissedReturns: metrics.NameGPULoanMissedReturns,
		expr.MetricGPULoanOnlineWait: metrics.NameGPULoanOnlineWait,
		expr.GPULoanOnTime:           metrics.ReturnOnTime, expr.GPULoanLate: metrics.ReturnLate,
	} {
		if got != want {
			t.Errorf("fragments read %q, the manager exports %q", got, want)
		}
	}
}

// gpuLoanNight is three hours of the loans of two pools, a sample a
// minute, as the leader m-0 exports them (m-1, the former leader, still
// scraped for the first 10 minutes): pool A100 lends 8 GPUs for two
// hours, then 2; its next return is due at 2h; one loan came back on time
// at 2h, one late at 2h10m, when an online pod began to wait for a GPU
// (a missed return) and waited 5 minutes in all, 30 s a minute for 10
// minutes. Pool L4 lends nothing, its counters at zero.
const gpuLoanNight = `
load 1m
  backfill_gpu_loan_lent_gpus{job="backfill",instance="m-0",pool="A100"} 8x120 2x60
  backfill_gpu_loan_lent_gpus{job="backfill",instance="m-1",pool="A100"} 8x10
  backfill_gpu_loan_lent_gpus{job="backfill",instance="m-0",pool="L4"} 0x180
  backfill_gpu_loan_next_return_timestamp_seconds{job="backfill",instance="m-0",pool="A100"} 7200x180
  backfill_gpu_loan_returns_total{job="backfill",instance="m-0",pool="A100",outcome="on_time"} 0x120 1x60
  backfill_gpu_loan_returns_total{job="backfill",instance="m-0",pool="A100",outcome="late"} 0x130 1x50
  backfill_gpu_loan_returns_total{job="backfill",instance="m-0",pool="L4",outcome="on_time"} 0x180
  backfill_gpu_loan_returns_total{job="backfill",instance="m-0",pool="L4",outcome="late"} 0x180
  backfill_gpu_loan_missed_returns_total{job="backfill",instance="m-0",pool="A100"} 0x125 1x55
  backfill_gpu_loan_missed_returns_total{job="backfill",instance="m-0",pool="L4"} 0x180
  backfill_gpu_loan_online_wait_seconds_total{job="backfill",instance="m-0",pool="A100"} 0x125 30+30x9 300x45
  backfill_gpu_loan_online_wait_seconds_total{job="backfill",instance="m-0",pool="L4"} 0x180
`

func TestGPULoanFragments(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	for name, e := range map[string]string{
		"GPULoanLentByPool":              expr.GPULoanLentByPool(),
		"GPULoanNextReturnInByPool":      expr.GPULoanNextReturnInByPool(),
		"GPULoanReturnsByPoolOver":       expr.GPULoanReturnsByPoolOver(expr.GPULoanLate, "1h"),
		"GPULoanMissedReturnsByPoolOver": expr.GPULoanMissedReturnsByPoolOver("1h"),
		"GPULoanOnlineWaitByPoolOver":    expr.GPULoanOnlineWaitByPoolOver("1h"),
		"GPULoanOnlineWaitingByPoolOver": expr.GPULoanOnlineWaitingByPoolOver("5m"),
	} {
		if _, err := p.ParseExpr(e); err != nil {
			t.Errorf("%s does not parse: %v\n%s", name, err, e)
		}
	}

	promqltest.RunTest(t, gpuLoanNight+`
# The former leader's series counts once, not twice.
eval instant at 5m `+expr.GPULoanLentByPool()+`
  {pool="A100"} 8
  {pool="L4"} 0

eval instant at 3h `+expr.GPULoanLentByPool()+`
  {pool="A100"} 2
  {pool="L4"} 0

# An hour before the return is due; L4 has none to make.
eval instant at 1h `+expr.GPULoanNextReturnInByPool()+`
  {pool="A100"} 3600

eval instant at 3h `+expr.GPULoanReturnsByPoolOver(expr.GPULoanOnTime, "3h")+`
  {pool="A100"} 1
  {pool="L4"} 0

eval instant at 3h `+expr.GPULoanReturnsByPoolOver(expr.GPULoanLate, "1h")+`
  {pool="A100"} 1
  {pool="L4"} 0

# Before the late return: none in the last hour.
eval instant at 2h5m `+expr.GPULoanReturnsByPoolOver(expr.GPULoanLate, "1h")+`
  {pool="A100"} 0
  {pool="L4"} 0

eval instant at 3h `+expr.GPULoanMissedReturnsByPoolOver("1h")+`
  {pool="A100"} 1
  {pool="L4"} 0

eval instant at 3h `+expr.GPULoanOnlineWaitByPoolOver("3h")+`
  {pool="A100"} 300
  {pool="L4"} 0

# Half a pod waiting on average while it waited 30 s a minute.
eval instant at 130m `+expr.GPULoanOnlineWaitingByPoolOver("5m")+`
  {pool="A100"} 0.5
  {pool="L4"} 0
`, promqltest.NewTestEngine(t, false, 0, 10000))
}
