package metricsserver

import (
	"strconv"
	"time"
)

// Resolution is how often metrics-server scrapes every node: the least it
// accepts. It reports a container's CPU as the rate between its last two
// scrapes, and kwok's counters start at 0, so new pods show in the metrics
// API two to three resolutions after they start running.
const Resolution = 10 * time.Second

// Options say how to run metrics-server.
type Options struct {
	// Kubeconfig is used for everything: reading nodes and pods, delegated
	// authentication and authorization, and scraping the kubelets. The
	// local cluster's admin kubeconfig will do.
	Kubeconfig string
	// Port is the loopback port metrics-server serves on.
	Port int
	// Serving is its serving certificate (WriteServing).
	Serving Serving
}

// Args are metrics-server's flags: serving on 127.0.0.1 with our
// certificate, scraping the simulated nodes' kubelets, which are all kwok's
// one server.
func Args(o Options) []string {
	return []string{
		"--kubeconfig=" + o.Kubeconfig,
		"--authentication-kubeconfig=" + o.Kubeconfig,
		"--authorization-kubeconfig=" + o.Kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(o.Port),
		"--tls-cert-file=" + o.Serving.CertFile,
		"--tls-private-key-file=" + o.Serving.KeyFile,
		// Only the apiserver's front proxy calls metrics-server, with the
		// requestheader CA the apiserver publishes. The local cluster's
		// apiserver authenticates by token and publishes no client CA, and
		// metrics-server then complains every few seconds that it misses
		// one. Its serving CA signed no client certificate: with it, none
		// is accepted, and the complaint is gone.
		"--client-ca-file=" + o.Serving.CAFile,
		// A node's InternalIP and status port are kwok's address (kwok's
		// node-initialize stage reports no Hostname address, whose name
		// would resolve nowhere); the node's path there comes from its
		// metrics.k8s.io/resource-metrics-path annotation.
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-use-node-status-port",
		// kwok serves https and plain http on the same port. Given no
		// --tls-cert-file it presents Go's built-in test certificate, whose
		// key is public: verifying it would prove nothing. On loopback, to
		// our own kwok, skip the check.
		"--kubelet-insecure-tls",
		"--metric-resolution=" + Resolution.String(),
		// metrics-server wants a scrape to time out within 90% of the
		// resolution; its default of 10 s does not.
		"--kubelet-request-timeout=5s",
	}
}
