package main

// budgetOf is a job's PodDisruptionBudget, maxUnavailable (negative:
// none), from a uniform draw x in [0, 1) and the workload's shares.
func budgetOf(x float64, w workload) int {
	switch {
	case x < w.pdbBlocking:
		return 0
	case x < w.pdbBlocking+w.pdbOne:
		return 1
	}
	return -1
}

// pdbAllows is the Eviction API's answer for a pod whose
// PodDisruptionBudget allows maxUnavailable pods down (negative: no
// budget) while unavailable are down already. A refused eviction waits:
// the pod keeps running and holding, and is asked again next time. A
// training gang is stopped whole by one eviction, so a budget of one pod
// refuses only while the job is already disrupted; a budget of none
// refuses always. Kills (the kernel's OOM killer, the koordlet's memory
// eviction, which kills before it evicts) ask no budget.
func pdbAllows(maxUnavailable, unavailable int) bool {
	return maxUnavailable < 0 || unavailable < maxUnavailable
}
