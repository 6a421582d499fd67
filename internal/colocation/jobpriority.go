package colocation

import (
	"slices"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// ReplicaPriorityClass is the PriorityClass the operator gives the pods of
// one replica type: the job's schedulingPolicy.priorityClass, else the
// replica template's priorityClassName, else the offline class, so that
// training yields to online work by default.
func ReplicaPriorityClass(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, offlinePriorityClass string) string {
	if sp := job.Spec.RunPolicy.SchedulingPolicy; sp != nil && sp.PriorityClass != "" {
		return sp.PriorityClass
	}
	if spec := job.Spec.TFReplicaSpecs[rtype]; spec != nil && spec.Template.Spec.PriorityClassName != "" {
		return spec.Template.Spec.PriorityClassName
	}
	return offlinePriorityClass
}

// JobPriorityClasses are the distinct PriorityClasses of the job's pods,
// in the order of kubeflowv1.ReplicaTypes.
func JobPriorityClasses(job *kubeflowv1.TFJob, offlinePriorityClass string) []string {
	var names []string
	for _, rtype := range kubeflowv1.ReplicaTypes {
		if job.Spec.TFReplicaSpecs[rtype] == nil {
			continue
		}
		name := ReplicaPriorityClass(job, rtype, offlinePriorityClass)
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}
