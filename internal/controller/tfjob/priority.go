package tfjob

import (
	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// priorityClassFor is the PriorityClass of a replica's pods: the job's
// schedulingPolicy.priorityClass, else the template's, else the manager's
// offline class, so that training yields to online work by default.
func priorityClassFor(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, offline string) string {
	if sp := job.Spec.RunPolicy.SchedulingPolicy; sp != nil && sp.PriorityClass != "" {
		return sp.PriorityClass
	}
	if spec := job.Spec.TFReplicaSpecs[rtype]; spec != nil && spec.Template.Spec.PriorityClassName != "" {
		return spec.Template.Spec.PriorityClassName
	}
	return offline
}

// priorityClassesOf are the PriorityClasses the job's pods use.
func priorityClassesOf(job *kubeflowv1.TFJob, offline string) []string {
	seen := map[string]bool{}
	var names []string
	for _, rtype := range replicaTypes(job) {
		if name := priorityClassFor(job, rtype, offline); name != "" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}
