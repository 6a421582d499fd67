package kwok

// Annotations and labels the simulation reads or sets. The stage and usage
// rules in config/ spell the same keys out; config_test.go keeps them in step.
const (
	// ManagedNodeAnnotation marks a Node as simulated: kwok manages exactly
	// the nodes carrying it with the value ManagedNodeValue.
	ManagedNodeAnnotation = "kwok.x-k8s.io/node"
	// ManagedNodeValue is the value of ManagedNodeAnnotation.
	ManagedNodeValue = "fake"

	// SimDurationAnnotation on a pod is a Go duration ("3m", "20s"): the pod
	// ends that long after it started running, succeeding unless
	// SimExitCodeAnnotation says otherwise.
	SimDurationAnnotation = "backfill.dev/sim-duration"
	// SimExitCodeAnnotation on a pod is an exit code from 1 to 255 ("1",
	// "137"): the pod fails with it once SimDurationAnnotation has passed
	// (at once when there is no duration). "0" means success.
	SimExitCodeAnnotation = "backfill.dev/sim-exit-code"

	// UsageCPUAnnotation on a pod is the CPU each of its containers uses,
	// as a quantity ("1500m"), in the emulated kubelet metrics.
	UsageCPUAnnotation = "kwok.x-k8s.io/usage-cpu"
	// UsageMemoryAnnotation on a pod is the memory working set of each of
	// its containers ("2Gi").
	UsageMemoryAnnotation = "kwok.x-k8s.io/usage-memory"

	// NodeTypeLabel says whether a node has GPUs: NodeTypeGPU or NodeTypeCPU.
	NodeTypeLabel = "backfill.dev/node-type"
	// NodeTypeGPU is the NodeTypeLabel value of nodes with GPUs.
	NodeTypeGPU = "gpu"
	// NodeTypeCPU is the NodeTypeLabel value of nodes without GPUs.
	NodeTypeCPU = "cpu"

	// GPUResource is the extended resource simulated GPUs are counted in.
	GPUResource = "nvidia.com/gpu"
)
