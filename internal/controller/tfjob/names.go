package tfjob

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// replicaName is the name of the pod and of the service of one replica,
// <job>-<lowercase type>-<index>, as Kubeflow v1 names them. Names are
// deterministic so that a stale cache can never create a replica twice: the
// apiserver answers AlreadyExists.
func replicaName(jobName string, rtype kubeflowv1.ReplicaType, index int) string {
	return fmt.Sprintf("%s-%s-%d", jobName, strings.ToLower(string(rtype)), index)
}

// jobLabels select every pod and service of a job.
func jobLabels(jobName string) map[string]string {
	return map[string]string{
		kubeflowv1.OperatorNameLabel:  kubeflowv1.OperatorName,
		kubeflowv1.JobNameLabel:       jobName,
		kubeflowv1.LegacyJobNameLabel: jobName,
	}
}

// replicaTypeLabels select the pods of one replica type.
func replicaTypeLabels(jobName string, rtype kubeflowv1.ReplicaType) map[string]string {
	l := jobLabels(jobName)
	l[kubeflowv1.ReplicaTypeLabel] = strings.ToLower(string(rtype))
	return l
}

// replicaLabels select the pod of one replica; its service uses them as its
// selector.
func replicaLabels(jobName string, rtype kubeflowv1.ReplicaType, index int) map[string]string {
	l := replicaTypeLabels(jobName, rtype)
	l[kubeflowv1.ReplicaIndexLabel] = strconv.Itoa(index)
	return l
}

// replicaTypeSelector is the selector reported in status.replicaStatuses.
func replicaTypeSelector(jobName string, rtype kubeflowv1.ReplicaType) string {
	return labels.SelectorFromSet(replicaTypeLabels(jobName, rtype)).String()
}

// isMasterRole reports whether a replica gets the job-role=master label: the
// chief, or worker 0 of a job without a chief.
func isMasterRole(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, rtype kubeflowv1.ReplicaType, index int) bool {
	if rtype.IsChiefOrMaster() {
		return true
	}
	return rtype == kubeflowv1.ReplicaTypeWorker && index == 0 && !hasChief(specs)
}

// hasChief reports whether the job runs a Chief or Master; one with zero
// replicas does not count, so worker 0 leads instead.
func hasChief(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec) bool {
	return specs[kubeflowv1.ReplicaTypeChief].ReplicaCount() > 0 || specs[kubeflowv1.ReplicaTypeMaster].ReplicaCount() > 0
}
