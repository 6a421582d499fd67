package v1

// Labels on every pod and service of a TFJob, as Kubeflow v1 sets them;
// Kueue and existing dashboards select on them.
const (
	// OperatorNameLabel names the operator: always OperatorName.
	OperatorNameLabel = "training.kubeflow.org/operator-name"
	// JobNameLabel holds the TFJob's name.
	JobNameLabel = "training.kubeflow.org/job-name"
	// ReplicaTypeLabel holds the lowercase replica type, e.g. worker.
	ReplicaTypeLabel = "training.kubeflow.org/replica-type"
	// ReplicaIndexLabel holds the replica's index, e.g. 0.
	ReplicaIndexLabel = "training.kubeflow.org/replica-index"
	// JobRoleLabel is "master" on the pod of the chief (or of worker 0 when
	// there is no chief).
	JobRoleLabel = "training.kubeflow.org/job-role"
	// LegacyJobNameLabel is the job-name label of older Kubeflow releases,
	// still used by scripts (kubectl get pods -l job-name=...).
	LegacyJobNameLabel = "job-name"

	// OperatorName is the value of OperatorNameLabel.
	OperatorName = "tfjob-controller"
	// JobRoleMaster is the value of JobRoleLabel.
	JobRoleMaster = "master"
)

// The tensorflow container and its port.
const (
	// ContainerName is the container that gets TF_CONFIG.
	ContainerName = "tensorflow"
	// PortName is the name of the port TensorFlow servers listen on.
	PortName = "tfjob-port"
	// DefaultPort is the port added when the container names none.
	DefaultPort int32 = 2222
)
