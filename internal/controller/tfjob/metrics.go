package tfjob

import (
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// observePass counts in the operator's metrics what a pass wrote: the
// transitions from the job's status to the new one, and why each replica
// pod it recreates ended. Called only once the status is written.
func observePass(job *kubeflowv1.TFJob, obs observed, status kubeflowv1.JobStatus, now time.Time) {
	pass := metrics.Pass{Job: job, Status: &status, Now: now}
	pass.Restarts, pass.Disruptions = recreatedPods(job, obs, &status)
	metrics.ObservePass(pass)
}

// recreatedPods classifies the pods a pass counted, the UIDs new in
// status.countedPods, as onEndedPod classified them when the plan counted
// them. A pass that counted no restart and no disruption (one that
// suspends the job also adds the pods it stops to countedPods) has none.
func recreatedPods(job *kubeflowv1.TFJob, obs observed, after *kubeflowv1.JobStatus) (map[metrics.RestartCause]int, map[string]int) {
	before := &job.Status
	if after.Restarts <= before.Restarts && after.Disruptions <= before.Disruptions {
		return nil, nil
	}
	fresh := sets.New(after.CountedPods...).Difference(sets.New(before.CountedPods...))
	restarts, disruptions := map[metrics.RestartCause]int{}, map[string]int{}
	for _, id := range allReplicas(job) {
		pod := obs.pods[replicaName(job.Name, id.rtype, id.index)]
		if pod == nil || !fresh.Has(string(pod.UID)) {
			continue
		}
		policy := job.Spec.TFReplicaSpecs[id.rtype].RestartPolicy
		switch action, reason := onEndedPod(policy, pod); {
		case action == restartDisrupted:
			disruptions[reason]++
		case action == restartReplica && policy == kubeflowv1.RestartPolicyExitCode:
			restarts[metrics.CauseExitCode]++
		case action == restartReplica:
			restarts[metrics.CauseOnFailure]++
		}
	}
	return restarts, disruptions
}
