package doctor

import kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"

// checklistItem is one check of `backfill doctor`.
type checklistItem struct {
	// id is the check's id (Check…); its results carry it, but for the
	// Prometheus checks, which report under their own ids.
	id string
	// needs are the cluster-wide reads (read…) the check cannot run
	// without: when the user was refused one, the check is a SKIP that
	// names the reads refused.
	needs []string
	run   func(in *checkInput) []Result
}

// checkInput is what the checks judge: the snapshot, and what several of
// them share, worked out once.
type checkInput struct {
	s *Snapshot
	// jobs are the active jobs (Snapshot.activeJobs).
	jobs []*kubeflowv1.TFJob
	// refusals explain the active jobs that miss pods, for the checks of
	// the apiserver's refusals.
	refusals []jobRefusal
	// prom is what Prometheus said; nil when no Prometheus URL was given.
	prom *PrometheusView
}

// checklist is every check, in the order Run runs and prints them: the
// order a person would walk them. Is the CRD backfill's, is the operator
// there and alone, does Kueue hold the jobs and why, why do pods wait or
// the apiserver refuse them, are priorities right, do GPUs show, does
// reclaimed capacity follow usage, does a node agent guard it, do online
// pods suffer beside training, do containers crash, do rules and
// dashboards query GPU metrics that exist, does monitoring see it all,
// do online pods hold GPUs they leave idle, and can GPU loans foresee
// when online work wants its GPUs back.
var checklist = []checklistItem{
	{CheckCRD, nil, func(in *checkInput) []Result { return []Result{checkCRD(in.s.TFJobsServed)} }},
	{CheckCRDMatch, []string{readCRDs}, func(in *checkInput) []Result { return checkCRDMatch(in.s) }},
	{CheckOperator, []string{readLeases, readAllPods}, func(in *checkInput) []Result { return []Result{checkOperator(in.s, in.jobs)} }},
	{CheckOtherController, []string{readDeployments, readAllPods, readLeases}, func(in *checkInput) []Result { return checkOtherController(in.s) }},
	{CheckKueueIntegration, []string{readWorkloads}, func(in *checkInput) []Result { return checkKueueIntegration(in.s) }},
	{CheckKueueWaiting, []string{readWorkloads}, func(in *checkInput) []Result { return checkKueueWaiting(in.s) }},
	{CheckPriorityClassMissing, []string{readPriorityClasses}, func(in *checkInput) []Result { return checkPriorityClassMissing(in.s, in.jobs) }},
	{CheckPendingResources, []string{readNodes, readAllPods}, func(in *checkInput) []Result { return checkPending(in.s, in.jobs) }},
	{CheckResourceQuota, nil, func(in *checkInput) []Result { return checkQuota(in.refusals) }},
	{CheckLimitRange, nil, func(in *checkInput) []Result { return checkLimitRange(in.refusals) }},
	{CheckPodCreate, nil, func(in *checkInput) []Result { return checkPodCreate(in.refusals) }},
	{CheckOfflinePriority, []string{readAllPods, readPriorityClasses}, func(in *checkInput) []Result { return checkOfflinePriority(in.s) }},
	{CheckGPUNodes, []string{readNodes}, func(in *checkInput) []Result { return []Result{checkGPUNodes(in.s, in.jobs)} }},
	{CheckReclaimUsage, []string{readNodes}, func(in *checkInput) []Result { return []Result{checkReclaimUsage(in.s)} }},
	{CheckNodeAgent, []string{readAllPods}, func(in *checkInput) []Result { return []Result{checkNodeAgent(in.s)} }},
	{CheckOnlineSignal, []string{readNodes}, func(in *checkInput) []Result { return checkOnlineSignal(in.s) }},
	{CheckCrashLoop, nil, func(in *checkInput) []Result { return checkCrashLoop(in.s) }},
	// Needs none: it judges its two reads itself, and checks the one it
	// may read when refused the other.
	{CheckGPUMetricNames, nil, func(in *checkInput) []Result { return checkGPUMetricNames(in.s) }},
	{CheckPrometheus, nil, func(in *checkInput) []Result { return checkPrometheus(in.prom, gpuNodeCount(in.s)) }},
	{CheckGPUIdleOnline, nil, func(in *checkInput) []Result { return checkGPUIdleOnline(in.prom) }},
	{CheckGPULoanForecast, []string{readDeployments, readStatefulSets, readNodes}, func(in *checkInput) []Result { return checkGPULoanForecast(in.s, in.prom) }},
	// Needs none: it says itself when ScaledObjects cannot be read.
	{CheckGPULoanKEDA, nil, func(in *checkInput) []Result { return checkGPULoanKEDA(in.s) }},
}

// Run runs every check of the checklist on the snapshot, in its order; a
// check that needs a read the user was refused is a SKIP. prom is nil
// when no Prometheus URL was given.
func Run(s *Snapshot, prom *PrometheusView) []Result {
	jobs := s.activeJobs()
	in := &checkInput{s: s, jobs: jobs, refusals: refusalsOf(s, jobs), prom: prom}
	var out []Result
	for _, c := range checklist {
		if skip, skipped := skipForAccess(s, c); skipped {
			out = append(out, skip)
			continue
		}
		out = append(out, c.run(in)...)
	}
	return out
}

func gpuNodeCount(s *Snapshot) int {
	n := 0
	for i := range s.Nodes {
		if q := s.Nodes[i].Status.Allocatable[GPUResource]; !q.IsZero() {
			n++
		}
	}
	return n
}
