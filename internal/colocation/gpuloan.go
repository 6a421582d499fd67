package colocation

// GPU loans (internal/gpuloan): training borrows the GPUs online inference
// leaves idle at night and gives them back before the online forecast
// needs them.
const (
	// ReasonGPUsReturnedToOnline is the stop reason of a training pod whose
	// GPUs go back to online work, and the reason of its job's Suspended
	// condition while the job waits for its next loan.
	ReasonGPUsReturnedToOnline = "GPUsReturnedToOnline"
	// ReasonGPULoanTooShort is the reason of the CapacityPending condition
	// of a new job that asks for lent GPUs while no loan lasts long enough
	// for it to reach a checkpoint.
	ReasonGPULoanTooShort = "GPULoanTooShort"
	// GPULoanPausedAnnotation on a TFJob says, in words, that the manager
	// paused it to return its GPUs to online work, and when it may borrow
	// again: "returned 4 GPUs to online at 07:25 UTC, next loan from ~22:10
	// UTC". The operator writes it as the message of the job's Suspended
	// condition.
	GPULoanPausedAnnotation = "backfill.dev/gpu-loan-paused"
	// GPUModelLabel is the label NVIDIA's GPU feature discovery puts on a
	// node: the model of its GPUs. Nodes of one model form a GPU pool.
	GPUModelLabel = "nvidia.com/gpu.product"
)
