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

	// SimCrashLoopAnnotation set to "true" on a pod makes its containers
	// crash one second after each start and wait ten seconds in
	// CrashLoopBackOff before the next, with a growing restartCount, for as
	// long as the pod lives (config/pod-crash-loop.yaml). The pod never ends
	// its simulated training. On a TFJob, set it in a replica's pod template.
	SimCrashLoopAnnotation = "backfill.dev/sim-crash-loop"
	// SimLogAnnotation on a pod is text its containers print after their
	// simulated TensorFlow start-up lines, one log line per line of text
	// (e.g. "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected").
	// The local cluster's training simulation writes each pod's log, which
	// the apiserver serves through kwok (`kubectl logs`).
	SimLogAnnotation = "backfill.dev/sim-log"

	// UsageCPUAnnotation on a pod is the CPU each of its containers uses,
	// as a quantity ("1500m"), in the emulated kubelet metrics.
	UsageCPUAnnotation = "kwok.x-k8s.io/usage-cpu"
	// UsageMemoryAnnotation on a pod is the memory working set of each of
	// its containers ("2Gi").
	UsageMemoryAnnotation = "kwok.x-k8s.io/usage-memory"

	// SystemCPUAnnotation on a node is the CPU, in cores ("0.05"), that
	// its own daemons use (kubelet, container runtime, OS), added to its
	// pods' in the emulated node metrics. A real node is never idle:
	// metrics-server leaves out a node whose reading is zero, and
	// `kubectl top nodes` shows it as unknown.
	SystemCPUAnnotation = "backfill.dev/sim-system-cpu"
	// SystemMemoryAnnotation on a node is its daemons' memory working set
	// in bytes ("268435456").
	SystemMemoryAnnotation = "backfill.dev/sim-system-memory"

	// NodeTypeLabel says whether a node has GPUs: NodeTypeGPU or NodeTypeCPU.
	NodeTypeLabel = "backfill.dev/node-type"
	// NodeTypeGPU is the NodeTypeLabel value of nodes with GPUs.
	NodeTypeGPU = "gpu"
	// NodeTypeCPU is the NodeTypeLabel value of nodes without GPUs.
	NodeTypeCPU = "cpu"

	// GPUResource is the extended resource simulated GPUs are counted in.
	GPUResource = "nvidia.com/gpu"
)
