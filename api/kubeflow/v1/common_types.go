package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReplicaSpec describes the replicas of one type.
//
// +kubebuilder:validation:XValidation:rule="has(self.template.spec) && self.template.spec.containers.exists(c, c.name == 'tensorflow')",message="template.spec.containers must include a container named tensorflow: the operator gives it TF_CONFIG and its port",fieldPath=".template"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec) || self.template.spec.containers.all(c, has(c.image) && size(c.image) > 0)",message="every container in template.spec.containers needs an image",fieldPath=".template"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec) || self.template.spec.containers.all(c, c.name != 'tensorflow' || !has(c.env) || c.env.all(e, e.name != 'TF_CONFIG'))",message="TF_CONFIG is written by the operator: remove it from the tensorflow container's env",fieldPath=".template"
type ReplicaSpec struct {
	// replicas is the number of pods of this type. Defaults to 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// template is the pod of each replica. Its restartPolicy is replaced by
	// the replica's restartPolicy.
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitempty"`

	// restartPolicy says what happens when a replica's pod fails: Always,
	// OnFailure (restarted in place), Never (the job fails), or ExitCode
	// (exit codes 128-255 are retried, 1-127 fail the job). Defaults to Never.
	// +kubebuilder:default=Never
	// +optional
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
}

// RestartPolicy says how the replicas of one type are restarted.
// +kubebuilder:validation:Enum=Always;OnFailure;Never;ExitCode
type RestartPolicy string

const (
	// RestartPolicyAlways restarts the container whenever it exits.
	RestartPolicyAlways RestartPolicy = "Always"
	// RestartPolicyOnFailure restarts the container when it exits non-zero.
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	// RestartPolicyNever fails the job when a replica fails.
	RestartPolicyNever RestartPolicy = "Never"
	// RestartPolicyExitCode recreates the pod for exit codes 128-255
	// (retryable, e.g. killed by a signal) and fails the job for 1-127.
	RestartPolicyExitCode RestartPolicy = "ExitCode"
)

// RunPolicy holds the runtime policies of a job.
type RunPolicy struct {
	// cleanPodPolicy says which pods are deleted when the job finishes: All,
	// Running (those still running) or None. When unset, the manager's
	// --default-clean-pod-policy applies (Running; Kubeflow v1 used None).
	// +optional
	CleanPodPolicy *CleanPodPolicy `json:"cleanPodPolicy,omitempty"`

	// ttlSecondsAfterFinished deletes the job this many seconds after it
	// finished. Unset keeps it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// activeDeadlineSeconds fails the job this many seconds after its
	// startTime.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// backoffLimit is the number of restarts after failures that the job
	// tolerates before it fails. Unset is unlimited. Disruptions such as
	// preemption are not charged to it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// schedulingPolicy holds gang-scheduling and priority settings.
	// +optional
	SchedulingPolicy *SchedulingPolicy `json:"schedulingPolicy,omitempty"`

	// suspend stops the job: while true no pods run, and its pods and
	// services are deleted. Resuming resets startTime. Kueue admits jobs by
	// clearing it.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// managedBy names the controller that reconciles this job:
	// kubeflow.org/training-operator (the default when unset, served by
	// backfill) or kueue.x-k8s.io/multikueue. Immutable.
	// +kubebuilder:validation:Enum=kubeflow.org/training-operator;kueue.x-k8s.io/multikueue
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`
}

// CleanPodPolicy says which pods are deleted when a job finishes.
// +kubebuilder:validation:Enum=All;Running;None
type CleanPodPolicy string

const (
	// CleanPodPolicyAll deletes every pod of the job.
	CleanPodPolicyAll CleanPodPolicy = "All"
	// CleanPodPolicyRunning deletes the pods that are still running or
	// pending, such as parameter servers.
	CleanPodPolicyRunning CleanPodPolicy = "Running"
	// CleanPodPolicyNone deletes nothing.
	CleanPodPolicyNone CleanPodPolicy = "None"
)

// Managers that may own a TFJob through runPolicy.managedBy.
const (
	// ManagedByTrainingOperator is the value for jobs backfill reconciles.
	ManagedByTrainingOperator = "kubeflow.org/training-operator"
	// ManagedByMultiKueue is the value for jobs MultiKueue dispatches to
	// another cluster; backfill leaves them alone.
	ManagedByMultiKueue = "kueue.x-k8s.io/multikueue"
)

// SchedulingPolicy holds gang-scheduling and priority settings of a job.
type SchedulingPolicy struct {
	// minAvailable is the number of pods that must be placed together for
	// the job to start (gang scheduling). Defaults to all replicas.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinAvailable *int32 `json:"minAvailable,omitempty"`

	// queue is the scheduler queue of the job (Volcano). Immutable.
	// +optional
	Queue string `json:"queue,omitempty"`

	// minResources are the resources the gang needs before it starts.
	// +optional
	MinResources *corev1.ResourceList `json:"minResources,omitempty"`

	// priorityClass is the PriorityClass of every pod of the job; it wins
	// over the pod template's priorityClassName.
	// +optional
	PriorityClass string `json:"priorityClass,omitempty"`

	// scheduleTimeoutSeconds is how long the gang may wait to be placed.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// JobStatus is the observed state of a job.
type JobStatus struct {
	// conditions are the job's observed conditions; the last one is its
	// current state.
	// +optional
	Conditions []JobCondition `json:"conditions,omitempty"`

	// replicaStatuses maps each replica type to the state of its pods.
	// +optional
	ReplicaStatuses map[ReplicaType]*ReplicaStatus `json:"replicaStatuses,omitempty"`

	// startTime is when the operator started the job's pods (reset on
	// resume); activeDeadlineSeconds counts from it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the job succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// lastReconcileTime is when the operator last changed this status.
	// +optional
	LastReconcileTime *metav1.Time `json:"lastReconcileTime,omitempty"`

	// restarts counts the restarts charged to runPolicy.backoffLimit: pods
	// recreated after a failure plus container restarts in place.
	// backfill extension.
	// +optional
	Restarts int32 `json:"restarts,omitempty"`

	// disruptions counts the pods ended by preemption, eviction, node
	// pressure or node loss and recreated without charge to backoffLimit.
	// backfill extension.
	// +optional
	Disruptions int32 `json:"disruptions,omitempty"`

	// countedPods are the UIDs of ended pods whose restart or disruption is
	// already counted above and whose replacement is under way; they keep
	// the counts exact across operator restarts. backfill extension.
	// +listType=set
	// +optional
	CountedPods []string `json:"countedPods,omitempty"`

	// progress is what the job's training code last reported to the
	// manager: its step and epoch, and its last durable checkpoint.
	// backfill extension.
	// +optional
	Progress *Progress `json:"progress,omitempty"`

	// goodput accounts the job's time: productive, or lost by cause.
	// backfill extension.
	// +optional
	Goodput *Goodput `json:"goodput,omitempty"`
}

// Progress is a job's training progress as its training code reports it
// (POST to the URL in each tensorflow container's BACKFILL_REPORT_URL).
type Progress struct {
	// step is the last step reported.
	// +kubebuilder:validation:Minimum=0
	Step int64 `json:"step"`
	// epoch is the last epoch reported, if any.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Epoch *int64 `json:"epoch,omitempty"`
	// reportTime is when the last report arrived.
	ReportTime metav1.Time `json:"reportTime"`
	// checkpointStep is the step of the last checkpoint reported durable.
	// +kubebuilder:validation:Minimum=0
	// +optional
	CheckpointStep *int64 `json:"checkpointStep,omitempty"`
	// checkpointTime is when that checkpoint was reported.
	// +optional
	CheckpointTime *metav1.Time `json:"checkpointTime,omitempty"`
}

// Goodput accounts a job's time since it was created, in whole seconds:
// productive training, or lost by cause. The causes add up, with
// productiveSeconds, to the job's life until accountedTime.
type Goodput struct {
	// productiveSeconds is time training ran and kept its progress.
	ProductiveSeconds int64 `json:"productiveSeconds"`
	// progressLostSeconds is training time a disruption undid: from the
	// last checkpoint (or the start, for a job that reports none) to the
	// disruption.
	ProgressLostSeconds int64 `json:"progressLostSeconds"`
	// recoverySeconds is time from a disruption until every replica ran
	// again.
	RecoverySeconds int64 `json:"recoverySeconds"`
	// waitingSeconds is time waiting for capacity before the job first ran.
	WaitingSeconds int64 `json:"waitingSeconds"`
	// accountedTime is when the account was last brought up to date.
	AccountedTime metav1.Time `json:"accountedTime"`
	// runningSince is when the job last started running with every
	// replica: the start of the progress a disruption can undo.
	// +optional
	RunningSince *metav1.Time `json:"runningSince,omitempty"`
}

// ReplicaStatus is the observed state of the pods of one replica type.
type ReplicaStatus struct {
	// active is the number of running pods.
	// +optional
	Active int32 `json:"active,omitempty"`
	// succeeded is the number of pods that succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// failed is the number of pods that failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// succeededIndexes are the indexes of the replicas that succeeded. They
	// are never started again, even when their pods are deleted.
	// backfill extension.
	// +listType=set
	// +optional
	SucceededIndexes []int32 `json:"succeededIndexes,omitempty"`
	// labelSelector selects the pods of this replica type.
	//
	// Deprecated: use selector.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// selector is the label selector of the pods of this replica type, in
	// the string form of kubectl's -l flag.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// JobCondition is one observed condition of a job.
type JobCondition struct {
	// type of the condition.
	Type JobConditionType `json:"type"`
	// status of the condition: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// reason is a CamelCase word for the last transition, e.g. TFJobRunning.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says in words what happened.
	// +optional
	Message string `json:"message,omitempty"`
	// lastUpdateTime is when the condition was last written.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// JobConditionType is the type of a job condition.
type JobConditionType string

const (
	// JobCreated means the job was accepted and its pods are being created.
	JobCreated JobConditionType = "Created"
	// JobRunning means the pods that decide the job's progress are running.
	JobRunning JobConditionType = "Running"
	// JobRestarting means one or more pods ended and are being restarted.
	JobRestarting JobConditionType = "Restarting"
	// JobSucceeded means the job finished successfully. Terminal.
	JobSucceeded JobConditionType = "Succeeded"
	// JobSuspended means the job is suspended and has no pods.
	JobSuspended JobConditionType = "Suspended"
	// JobFailed means the job failed. Terminal.
	JobFailed JobConditionType = "Failed"
	// JobCapacityPending means pods of the job wait for the capacity they
	// ask for; its reason and message say why and what to do. backfill
	// adds it while they wait and removes it when none does. It is not a
	// state: it stays first in the list, so the last condition is still
	// the job's state.
	JobCapacityPending JobConditionType = "CapacityPending"
)
