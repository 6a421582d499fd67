package doctor

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// missingReplicas are the pods of one replica type of a job that do not
// exist, and the pod the operator sends the apiserver for each: with the
// resources a pod of that type already created got, or else built from
// the template as the operator builds it (on reclaimed capacity:
// colocation.ToBatchResources).
type missingReplicas struct {
	rtype   kubeflowv1.ReplicaType
	missing int
	pod     *corev1.Pod
	// reclaimed: the pod runs on reclaimed capacity.
	reclaimed bool
}

// missingByType lists the replica types of a job that miss pods, in
// order.
func (s *Snapshot) missingByType(j *kubeflowv1.TFJob) []missingReplicas {
	live := map[string][]*corev1.Pod{}
	for _, p := range s.jobPods(j) {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded {
			t := p.Labels[kubeflowv1.ReplicaTypeLabel]
			live[t] = append(live[t], p)
		}
	}
	var out []missingReplicas
	for _, rtype := range replicaTypes(j) {
		spec := j.Spec.TFReplicaSpecs[rtype]
		if spec == nil {
			continue
		}
		want := int(spec.ReplicaCount())
		if rs := j.Status.ReplicaStatuses[rtype]; rs != nil {
			want -= len(rs.SucceededIndexes)
		}
		pods := live[strings.ToLower(string(rtype))]
		if want-len(pods) <= 0 {
			continue
		}
		m := missingReplicas{rtype: rtype, missing: want - len(pods)}
		if len(pods) > 0 {
			m.pod = pods[0].DeepCopy()
			_, m.reclaimed = m.pod.Annotations[colocation.OriginalResourcesAnnotation]
		} else {
			m.pod, m.reclaimed = s.podFromTemplate(j, rtype)
		}
		out = append(out, m)
	}
	return out
}

// podFromTemplate is the pod the operator makes of a replica template,
// as far as admission cares: its resources and priority class.
func (s *Snapshot) podFromTemplate(j *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType) (*corev1.Pod, bool) {
	template := j.Spec.TFReplicaSpecs[rtype].Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: template.ObjectMeta, Spec: template.Spec}
	pod.Namespace = j.Namespace
	pod.Spec.PriorityClassName = colocation.ReplicaPriorityClass(j, rtype, s.OfflinePriorityClass)
	if !colocation.OnReclaimedCapacity(j.Annotations) || !s.reclaimOn() {
		return pod, false
	}
	original, err := colocation.ToBatchResources(&pod.Spec, colocation.ContainerRulesOf(s.limitRangesOf(j.Namespace)))
	if err != nil || original == "" {
		return pod, false
	}
	return pod, true
}

// reclaimOn guesses whether the manager moves TFJob pods to reclaimed
// capacity: some TFJob pod was, or some node has the manager's
// explanation of its reclaimed capacity. A user who may not list nodes
// and sees no TFJob pod gets the manager's default, on.
func (s *Snapshot) reclaimOn() bool {
	seen := false
	for i := range s.Pods {
		if p := &s.Pods[i]; isTFJobPod(p) {
			if _, ok := p.Annotations[colocation.OriginalResourcesAnnotation]; ok {
				return true
			}
			seen = true
		}
	}
	for i := range s.Nodes {
		if _, ok := s.Nodes[i].Annotations[reclaim.ExplanationAnnotation]; ok {
			return true
		}
	}
	return s.Forbidden[readNodes] && !seen
}

func (s *Snapshot) limitRangesOf(namespace string) []corev1.LimitRange {
	var out []corev1.LimitRange
	for _, lr := range s.LimitRanges {
		if lr.Namespace == namespace {
			out = append(out, lr)
		}
	}
	return out
}

func (s *Snapshot) quotasOf(namespace string) []*corev1.ResourceQuota {
	var out []*corev1.ResourceQuota
	for i := range s.Quotas {
		if s.Quotas[i].Namespace == namespace {
			out = append(out, &s.Quotas[i])
		}
	}
	return out
}
