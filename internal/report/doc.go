// Package report is the manager's HTTPS endpoint for training progress:
// training code POSTs {"step", "epoch", "checkpoint"} to
// /v1/namespaces/{namespace}/tfjobs/{name}/progress with the ServiceAccount
// token the operator projects into its pod (audience backfill.dev, bound to
// the pod), the pattern of Kubeflow Trainer's status server.
//
// A report is accepted only from a live pod of the job it names: the
// token is checked by a TokenReview, the pod it is bound to must exist
// with that UID, not be terminating, and be one of the replicas the
// operator creates for that job (tfjob.ReplicaOf), whatever labels and
// owner references another pod is given. An
// accepted report changes nothing but its job's progress in the
// progress.Store; the TFJob controller writes it into the job's status.
// Training pods need no RBAC permission at all.
//
// One concern per file: authn.go (the bearer token and who it names),
// tokenreview.go, claims.go and reviewlimit.go (checking it, within
// limits), tokencache.go and lru.go (remembering what was learnt of it),
// authz.go (the pod and the job), ratelimit.go, handler.go (the endpoint),
// server.go (HTTPS).
package report
