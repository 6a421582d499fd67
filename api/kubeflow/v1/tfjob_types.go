package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TFJob is a distributed TensorFlow training job: a set of replicas (chief,
// workers, parameter servers, evaluator), each run as one pod with its own
// headless Service and a TF_CONFIG that describes the whole cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Waiting",type=string,JSONPath=`.status.conditions[?(@.type=="CapacityPending")].reason`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`,priority=1
// +kubebuilder:printcolumn:name="Disruptions",type=integer,JSONPath=`.status.disruptions`,priority=1
// +kubebuilder:printcolumn:name="Step",type=integer,JSONPath=`.status.progress.step`,priority=1
// +kubebuilder:printcolumn:name="Checkpoint",type=date,JSONPath=`.status.progress.checkpointTime`,priority=1
// +kubebuilder:printcolumn:name="Why",type=string,JSONPath=`.status.conditions[?(@.type=="CapacityPending")].message`,priority=1
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter, ending with a letter or digit), because pod and service names are derived from it",fieldPath=".metadata.name"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.tfReplicaSpecs) || self.spec.tfReplicaSpecs.all(t, size(self.metadata.name) + size(t) + size(string((has(self.spec.tfReplicaSpecs[t].replicas) ? self.spec.tfReplicaSpecs[t].replicas : 1) - 1)) + 2 <= 63)",message="metadata.name is too long: the derived pod and service names <name>-<replica type>-<index> must fit in 63 characters; shorten metadata.name",fieldPath=".metadata.name"
type TFJob struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the TFJob.
	// +kubebuilder:validation:Required
	Spec TFJobSpec `json:"spec,omitempty"`

	// status is the most recently observed state of the TFJob, written by
	// the operator.
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// TFJobSpec is the desired state of a TFJob.
//
// +kubebuilder:validation:XValidation:rule="(has(self.runPolicy) && has(self.runPolicy.managedBy) ? self.runPolicy.managedBy : '-') == (has(oldSelf.runPolicy) && has(oldSelf.runPolicy.managedBy) ? oldSelf.runPolicy.managedBy : '-')",message="spec.runPolicy.managedBy is immutable: delete and recreate the TFJob to hand it to another controller",fieldPath=".runPolicy.managedBy"
// +kubebuilder:validation:XValidation:rule="(has(self.runPolicy) && has(self.runPolicy.schedulingPolicy) && has(self.runPolicy.schedulingPolicy.queue) && size(self.runPolicy.schedulingPolicy.queue) > 0 ? self.runPolicy.schedulingPolicy.queue : '-') == (has(oldSelf.runPolicy) && has(oldSelf.runPolicy.schedulingPolicy) && has(oldSelf.runPolicy.schedulingPolicy.queue) && size(oldSelf.runPolicy.schedulingPolicy.queue) > 0 ? oldSelf.runPolicy.schedulingPolicy.queue : '-')",message="spec.runPolicy.schedulingPolicy.queue is immutable, including setting or removing it: delete and recreate the TFJob to move it to another queue",fieldPath=".runPolicy.schedulingPolicy.queue"
type TFJobSpec struct {
	// runPolicy holds the runtime policies of the job: pod clean-up, TTL,
	// deadline, backoff, scheduling, suspension and the managing controller.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy"`

	// successPolicy says when the job has succeeded: "" (the default) when
	// the chief (or master) succeeds, or worker 0 when there is no chief;
	// "AllWorkers" when every worker has succeeded.
	// +optional
	SuccessPolicy *SuccessPolicy `json:"successPolicy,omitempty"`

	// tfReplicaSpecs maps a replica type (PS, Worker, Chief, Master or
	// Evaluator; keys in any case) to the spec of its replicas. For example
	// {"PS": ReplicaSpec, "Worker": ReplicaSpec}.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=5
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.lowerAscii() in ['ps', 'worker', 'chief', 'master', 'evaluator'])",message="spec.tfReplicaSpecs keys must be PS, Worker, Chief, Master or Evaluator"
	// +kubebuilder:validation:XValidation:rule="self.all(t, self.filter(u, u.lowerAscii() == t.lowerAscii()).size() == 1)",message="spec.tfReplicaSpecs names a replica type twice (keys that differ only in case are the same type); keep one"
	// +kubebuilder:validation:XValidation:rule="self.filter(t, t.lowerAscii() in ['chief', 'master']).size() <= 1",message="spec.tfReplicaSpecs may have one Chief or one Master, not both (Master is the legacy name of Chief)"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !(t.lowerAscii() in ['chief', 'master']) || !has(self[t].replicas) || self[t].replicas <= 1)",message="spec.tfReplicaSpecs: Chief/Master replicas must be 0 or 1; use Worker for more replicas"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !(t.lowerAscii() in ['chief', 'master'] || (t.lowerAscii() == 'worker' && !self.exists(u, u.lowerAscii() in ['chief', 'master']))) || !has(self[t].restartPolicy) || self[t].restartPolicy != 'Always')",message="spec.tfReplicaSpecs: restartPolicy Always is not allowed on the Chief or Master, nor on Worker when there is no Chief or Master: it restarts the replica that decides success even after it exits 0, so the job could never finish; use OnFailure or ExitCode"
	TFReplicaSpecs map[ReplicaType]*ReplicaSpec `json:"tfReplicaSpecs"`

	// enableDynamicWorker makes TF_CONFIG sparse, so that workers can join
	// without knowing every other worker.
	// +optional
	EnableDynamicWorker bool `json:"enableDynamicWorker,omitempty"`
}

// SuccessPolicy says when a TFJob has succeeded.
// +kubebuilder:validation:Enum="";AllWorkers
type SuccessPolicy string

const (
	// SuccessPolicyDefault means the chief (or master) succeeded, or worker 0 when
	// there is no chief.
	SuccessPolicyDefault SuccessPolicy = ""
	// SuccessPolicyAllWorkers means every worker succeeded.
	SuccessPolicyAllWorkers SuccessPolicy = "AllWorkers"
)

// ReplicaType is the role of a group of replicas in a TFJob.
type ReplicaType string

const (
	// ReplicaTypePS is a parameter server.
	ReplicaTypePS ReplicaType = "PS"
	// ReplicaTypeWorker is a worker; worker 0 is the chief when there is no
	// Chief or Master.
	ReplicaTypeWorker ReplicaType = "Worker"
	// ReplicaTypeChief is the chief worker.
	ReplicaTypeChief ReplicaType = "Chief"
	// ReplicaTypeMaster is the legacy name of the chief.
	ReplicaTypeMaster ReplicaType = "Master"
	// ReplicaTypeEvaluator evaluates checkpoints beside the training cluster.
	ReplicaTypeEvaluator ReplicaType = "Evaluator"
)

// ReplicaTypes lists the replica types in the order backfill handles them.
var ReplicaTypes = []ReplicaType{ReplicaTypeChief, ReplicaTypeMaster, ReplicaTypePS, ReplicaTypeWorker, ReplicaTypeEvaluator}

// IsChiefOrMaster reports whether t is the chief role.
func (t ReplicaType) IsChiefOrMaster() bool {
	return t == ReplicaTypeChief || t == ReplicaTypeMaster
}

// TFJobList is a list of TFJobs.
//
// +kubebuilder:object:root=true
type TFJobList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the TFJobs.
	Items []TFJob `json:"items"`
}
