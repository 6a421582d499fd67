package doctor

// Run runs every check on the snapshot, in the order a person would walk
// them: is the CRD backfill's, is the operator there and alone, does Kueue
// hold the jobs and why, why do pods wait or the apiserver refuse them,
// are priorities right, do GPUs show, does reclaimed capacity follow
// usage, does a node agent guard it, do online pods suffer beside
// training, do containers crash, do rules and dashboards query GPU
// metrics that exist, does monitoring see it all. prom is nil
// when no Prometheus URL was given.
func Run(s *Snapshot, prom *PrometheusView) []Result {
	out := []Result{checkCRD(s.TFJobsServed)}
	jobs := s.activeJobs()
	// run adds a check's results, or its SKIP when the user may not read
	// what it needs.
	run := func(check string, results func() []Result) {
		if skip, skipped := skipForAccess(s, check); skipped {
			out = append(out, skip)
			return
		}
		out = append(out, results()...)
	}
	run(CheckCRDMatch, func() []Result { return checkCRDMatch(s) })
	run(CheckOperator, func() []Result { return []Result{checkOperator(s, jobs)} })
	run(CheckOtherController, func() []Result { return checkOtherController(s) })
	run(CheckKueueIntegration, func() []Result { return checkKueueIntegration(s) })
	run(CheckKueueWaiting, func() []Result { return checkKueueWaiting(s) })
	run(CheckPriorityClassMissing, func() []Result { return checkPriorityClassMissing(s, jobs) })
	run(CheckPendingResources, func() []Result { return checkPending(s, jobs) })
	refusals := refusalsOf(s, jobs)
	out = append(out, checkQuota(refusals)...)
	out = append(out, checkLimitRange(refusals)...)
	out = append(out, checkPodCreate(refusals)...)
	run(CheckOfflinePriority, func() []Result { return checkOfflinePriority(s) })
	run(CheckGPUNodes, func() []Result { return []Result{checkGPUNodes(s, jobs)} })
	run(CheckReclaimUsage, func() []Result { return []Result{checkReclaimUsage(s)} })
	run(CheckNodeAgent, func() []Result { return []Result{checkNodeAgent(s)} })
	run(CheckOnlineSignal, func() []Result { return checkOnlineSignal(s) })
	out = append(out, checkCrashLoop(s)...)
	out = append(out, checkGPUMetricNames(s)...)
	out = append(out, checkPrometheus(prom, gpuNodeCount(s))...)
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
