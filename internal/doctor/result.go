// Package doctor holds the checks of `backfill doctor`: the troubleshooting
// checklist of a co-located training cluster (operator, pending pods and
// why, priorities, GPUs, crash loops, Prometheus) as small functions over
// the objects each one needs. Collect reads those objects from a cluster;
// the checks themselves never talk to a server.
package doctor

import "slices"

// Status is a check's verdict.
type Status string

// The verdicts. Only FAIL makes `backfill doctor` exit 1; SKIP says a check
// did not run and why.
const (
	StatusOK   Status = "OK"
	StatusWarn Status = "WARN"
	StatusFail Status = "FAIL"
	StatusSkip Status = "SKIP"
)

// Check ids, stable for scripts reading `doctor -o json`. The checklist
// (run.go) says in which order they run and what each needs.
const (
	CheckCRD                  = "tfjob-crd"
	CheckCRDMatch             = "tfjob-crd-match"
	CheckOperator             = "operator"
	CheckOtherController      = "other-tfjob-controller"
	CheckKueueIntegration     = "kueue-integration"
	CheckKueueWaiting         = "kueue-waiting"
	CheckPendingResources     = "pending-resources"
	CheckResourceQuota        = "resource-quota"
	CheckLimitRange           = "limit-range"
	CheckPodCreate            = "pod-create"
	CheckPriorityClassMissing = "priority-class-missing"
	CheckOfflinePriority      = "offline-priority"
	CheckGPUNodes             = "gpu-nodes"
	CheckReclaimUsage         = "reclaim-usage"
	CheckNodeAgent            = "node-agent"
	CheckOnlineSignal         = "online-signal"
	CheckCrashLoop            = "crash-loop"
	CheckGPUMetricNames       = "gpu-metric-names"
	// CheckPrometheus is the Prometheus checks' SKIP when no Prometheus
	// URL was given; otherwise they report as prometheus-targets and
	// prometheus-data.
	CheckPrometheus        = "prometheus"
	CheckPrometheusTargets = "prometheus-targets"
	CheckPrometheusData    = "prometheus-data"
	// CheckGPUIdleOnline reads Prometheus too: GPUs online pods held
	// idle over the last day.
	CheckGPUIdleOnline = "gpu-idle-online"
	// CheckGPULoanForecast and CheckGPULoanKEDA judge what GPU loans
	// foresee of online work: every online GPU workload's forecast, and
	// the KEDA ScaledObjects that state some.
	CheckGPULoanForecast = "gpu-loan-forecast"
	CheckGPULoanKEDA     = "gpu-loan-keda"
)

// Result is one finding of one check.
type Result struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	// Object is what the finding is about, e.g. "tfjob default/mnist";
	// empty for cluster-wide findings.
	Object string `json:"object,omitempty"`
	// Finding says what was seen, in one line, with the numbers.
	Finding string `json:"finding"`
	// Fix says what to do; empty when nothing needs doing.
	Fix string `json:"fix,omitempty"`
}

func ok(check, finding string) Result {
	return Result{Check: check, Status: StatusOK, Finding: finding}
}

// Failed reports whether any result is a FAIL.
func Failed(results []Result) bool {
	return slices.ContainsFunc(results, func(r Result) bool { return r.Status == StatusFail })
}

// Count is the number of results of each status.
func Count(results []Result) map[Status]int {
	n := map[Status]int{}
	for _, r := range results {
		n[r.Status]++
	}
	return n
}
