package tfjob

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// replicaScan is what observeReplicas learned about the replicas.
type replicaScan struct {
	// failure says why the job failed, if a replica failed for good.
	failure string
	// restartReason and restartMessage describe the restarts of this pass.
	restartReason, restartMessage string
	// inPlaceRestarts are the container restarts of live pods not yet
	// counted in status.restarts.
	inPlaceRestarts int32
	// decidingRunning: a pod of the type that decides success is running.
	decidingRunning bool
	// allRunning: every replica not done has a running pod.
	allRunning bool
	// backoffExceeded: a replica failed with no restart left.
	backoffExceeded bool
	// events announce the restarts; emitted only if the job goes on.
	events []event
	// restarted and disrupted count the pods the pass replaces, charged to
	// backoffLimit or not (by disruption reason): announceRestarts words
	// them.
	restarted int
	disrupted map[string]int
}

// observeReplicas walks every replica: it records succeeded indexes and
// replica counts, counts each ended pod once (its UID joins
// status.countedPods), schedules its replacement, and plans the pods to
// create. Pods carry a tracking finalizer, so an ended pod stays visible
// until its end is counted here and written.
func (p *plan) observeReplicas(job *kubeflowv1.TFJob, obs observed) replicaScan {
	counted := sets.New(p.status.CountedPods...)
	scan := replicaScan{allRunning: true, disrupted: map[string]int{}}
	deciding := decidingType(job)
	for _, rtype := range replicaTypes(job) {
		p.observeReplicaType(job, obs, rtype, rtype == deciding, counted, &scan)
	}
	p.status.CountedPods = sets.List(counted)
	scan.announceRestarts(job)
	return scan
}

// observeReplicaType is observeReplicas for the replicas of one type;
// deciding: the type's success is the job's.
func (p *plan) observeReplicaType(job *kubeflowv1.TFJob, obs observed, rtype kubeflowv1.ReplicaType, deciding bool, counted sets.Set[string], scan *replicaScan) {
	rs := replicaStatusFor(&p.status, job.Name, rtype)
	done := sets.New(rs.SucceededIndexes...)
	rs.Active, rs.Failed = 0, 0
	failedHere := 0
	for i := 0; i < int(job.Spec.TFReplicaSpecs[rtype].ReplicaCount()); i++ {
		name := replicaName(job.Name, rtype, i)
		pod := obs.pods[name]
		if !done.Has(int32(i)) && (pod == nil || pod.DeletionTimestamp != nil ||
			(pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != corev1.PodSucceeded)) {
			scan.allRunning = false
		}
		switch {
		case pod == nil:
			if !done.Has(int32(i)) && !obs.takenPods.Has(name) {
				p.createPods = append(p.createPods, replicaID{rtype, i})
			}
			continue
		case pod.Status.Phase == corev1.PodSucceeded:
			done.Insert(int32(i))
			p.release(pod)
			continue
		case pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodFailed:
			if pod.Status.Phase == corev1.PodRunning {
				rs.Active++
			}
			scan.inPlaceRestarts += ContainerRestarts(pod)
			continue
		}

		// The pod ended, or is being deleted, before it succeeded.
		if pod.Status.Phase == corev1.PodFailed {
			rs.Failed++
		}
		if p.restartEnded(job, rtype, pod, counted, scan) {
			failedHere++
		}
	}
	rs.SucceededIndexes = sortedIndexes(done)
	rs.Succeeded = int32(len(done))
	if failedHere > 0 && scan.failure == "" {
		scan.failure = jobMessage(job, fmt.Sprintf("has failed because %d %s replica(s) failed", failedHere, rtype))
	}
	if deciding && rs.Active > 0 {
		scan.decidingRunning = true
	}
}
