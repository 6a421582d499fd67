// Package queueing reads what Kueue says about a TFJob: whether it waits in
// a queue, in which one, and why, from the job's queue-name label and the
// Workload Kueue keeps for it. Kueue's types are read as unstructured
// objects, so that backfill does not depend on Kueue's Go module.
package queueing
