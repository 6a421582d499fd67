package tfjob

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// succeeded applies the success policy: the chief when there is one,
// otherwise worker 0, or every worker under AllWorkers.
func succeeded(job *kubeflowv1.TFJob, st *kubeflowv1.JobStatus) bool {
	rtype := decidingType(job)
	rs := st.ReplicaStatuses[rtype]
	if rs == nil {
		return false
	}
	if rtype == kubeflowv1.ReplicaTypeWorker && job.Spec.SuccessPolicy != nil && *job.Spec.SuccessPolicy == kubeflowv1.SuccessPolicyAllWorkers {
		return rs.Succeeded >= job.Spec.TFReplicaSpecs[rtype].ReplicaCount()
	}
	return slices.Contains(rs.SucceededIndexes, 0)
}

// decidingType is the replica type whose success is the job's: Chief or
// Master when it runs a replica, else Worker.
func decidingType(job *kubeflowv1.TFJob) kubeflowv1.ReplicaType {
	for _, t := range []kubeflowv1.ReplicaType{kubeflowv1.ReplicaTypeChief, kubeflowv1.ReplicaTypeMaster} {
		if job.Spec.TFReplicaSpecs[t].ReplicaCount() > 0 {
			return t
		}
	}
	return kubeflowv1.ReplicaTypeWorker
}

// succeed marks the job Succeeded and cleans up after it.
func (p *plan) succeed(job *kubeflowv1.TFJob, obs observed, now time.Time, pol policy) {
	mnow := metav1Time(now)
	setCondition(&p.status, kubeflowv1.JobSucceeded, corev1.ConditionTrue, reasonSucceeded, jobMessage(job, "successfully completed"), mnow)
	p.status.CompletionTime = &mnow
	p.emit(corev1.EventTypeNormal, reasonSucceeded, jobMessage(job, "successfully completed"))
	p.finish(job, obs, now, pol)
}
