// Package kwok simulates the nodes of the local cluster (`backfill dev`)
// and of the end-to-end suites with kwok (sigs.k8s.io/kwok): Node objects
// that a real kube-scheduler places pods on, and pods on them that run,
// finish their simulated training (or crash-loop), report resource usage,
// serve their containers' logs to the apiserver, and go away, all without a
// kubelet or a container runtime.
//
// The behaviour is ours, in config/ (embedded; see Config): kwok itself has
// none without stages. Start runs bin/kwok with it as a child process on
// loopback; NodeObject builds the nodes to create.
package kwok
