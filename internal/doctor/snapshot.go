package doctor

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Snapshot is what the checks look at: the objects of the namespaces in
// scope (jobs, their pods, quotas, limit ranges, events) and the
// cluster-wide ones that decide scheduling (nodes, every pod, priority
// classes, leases).
type Snapshot struct {
	Now time.Time
	// TFJobsServed: the apiserver serves kubeflow.org/v1 tfjobs (the CRD
	// is installed and established).
	TFJobsServed bool
	// Leases are the manager's leader-election Leases (by name) in any
	// namespace.
	Leases []coordinationv1.Lease
	// Jobs are the TFJobs in scope.
	Jobs []kubeflowv1.TFJob
	// Pods are every pod of the cluster: offline pods of the jobs in
	// scope, online pods that set the priority bar, and the requests that
	// fill the nodes.
	Pods            []corev1.Pod
	Nodes           []corev1.Node
	PriorityClasses []schedulingv1.PriorityClass
	// Quotas, LimitRanges and Events are those of the jobs' namespaces.
	Quotas      []corev1.ResourceQuota
	LimitRanges []corev1.LimitRange
	Events      []corev1.Event
	// Logs are the log tails of crash-looping or failed TFJob pods, by
	// logKey; a missing key means the log could not be read.
	Logs map[string]string
	// OfflinePriorityClass is the class of training pods that name none
	// (the manager's --offline-priority-class).
	OfflinePriorityClass string
	// Forbidden are the cluster-wide reads (readAllPods, readNodes, …) the
	// user was refused; Pods then holds the jobs' namespace's pods only.
	Forbidden map[string]bool

	// The neighbours: what else in the cluster acts on TFJobs.

	// CRD is the installed tfjobs.kubeflow.org, nil when there is none.
	CRD *apiextensionsv1.CustomResourceDefinition
	// Deployments are every Deployment of the cluster: another TFJob
	// controller is found by its Deployment.
	Deployments []appsv1.Deployment
	// StatefulSets are every StatefulSet of the cluster: with the
	// Deployments, the online workloads GPU loans forecast.
	StatefulSets []appsv1.StatefulSet
	// KEDA is what doctor read of KEDA's ScaledObjects.
	KEDA KEDAView
	// ControllerLeases are the leader-election Leases of other TFJob
	// controllers (by name) in any namespace.
	ControllerLeases []coordinationv1.Lease
	// Kueue is what Kueue says about the jobs in scope.
	Kueue KueueView
	// GPUQueries are the rules and dashboards whose GPU metric names
	// gpu-metric-names checks.
	GPUQueries GPUQueriesView

	// podsByController indexes Pods by their controller's UID, built on
	// first use; Pods must not change after that.
	podsByController map[types.UID][]*corev1.Pod
}

// logKey names one container's log in Snapshot.Logs.
func logKey(namespace, pod, container string) string {
	return namespace + "/" + pod + "/" + container
}

// jobRef is how findings name a job.
func jobRef(job *kubeflowv1.TFJob) string {
	return "tfjob " + job.Namespace + "/" + job.Name
}

// jobPods are the pods a job controls (by controller owner UID).
func (s *Snapshot) jobPods(job *kubeflowv1.TFJob) []*corev1.Pod {
	if s.podsByController == nil {
		s.podsByController = map[types.UID][]*corev1.Pod{}
		for i := range s.Pods {
			if uid := controllerUID(&s.Pods[i]); uid != "" {
				s.podsByController[uid] = append(s.podsByController[uid], &s.Pods[i])
			}
		}
	}
	if job.UID == "" {
		return nil
	}
	return s.podsByController[job.UID]
}

// controllerUID is the UID of the pod's controlling owner.
func controllerUID(p *corev1.Pod) types.UID {
	for _, ref := range p.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return ref.UID
		}
	}
	return ""
}

// activeJobs are the jobs that are neither finished nor suspended, nor
// handed to another controller: those whose pods should exist or run.
func (s *Snapshot) activeJobs() []*kubeflowv1.TFJob {
	var jobs []*kubeflowv1.TFJob
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if jobFinished(j) || jobSuspended(j) || !managedByUs(j) {
			continue
		}
		jobs = append(jobs, j)
	}
	return jobs
}

func jobFinished(j *kubeflowv1.TFJob) bool {
	return conditionTrue(j, kubeflowv1.JobSucceeded) || conditionTrue(j, kubeflowv1.JobFailed)
}

func jobSuspended(j *kubeflowv1.TFJob) bool {
	return j.Spec.RunPolicy.Suspend != nil && *j.Spec.RunPolicy.Suspend
}

func managedByUs(j *kubeflowv1.TFJob) bool {
	m := j.Spec.RunPolicy.ManagedBy
	return m == nil || *m == "" || *m == kubeflowv1.ManagedByTrainingOperator
}

func findCondition(j *kubeflowv1.TFJob, t kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func conditionTrue(j *kubeflowv1.TFJob, t kubeflowv1.JobConditionType) bool {
	c := findCondition(j, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// missingPods is how many of the job's pods do not exist, less the
// replicas that already succeeded and are never started again.
func (s *Snapshot) missingPods(j *kubeflowv1.TFJob) int {
	done := 0
	for _, rs := range j.Status.ReplicaStatuses {
		if rs != nil {
			done += len(rs.SucceededIndexes)
		}
	}
	live := 0
	for _, p := range s.jobPods(j) {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded {
			live++
		}
	}
	return max(0, int(j.TotalReplicas())-done-live)
}

// age says how long ago t was, in whole seconds or minutes.
func age(now, t time.Time) string {
	d := now.Sub(t)
	if d < 2*time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	if d < 2*time.Hour {
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}

// listNames joins at most three names and says how many more there are.
func listNames(names []string) string {
	const shown = 3
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}

// replicaTypes are the job's replica types in order.
func replicaTypes(j *kubeflowv1.TFJob) []kubeflowv1.ReplicaType {
	return slices.Sorted(maps.Keys(j.Spec.TFReplicaSpecs))
}
