package reclaim

import (
	"context"
	"time"
)

// UsageSource measures what each node's pods use. The manager's
// --reclaim-usage-source chooses one: Prometheus (the kubelet series
// kube-prometheus-stack scrapes) or the Kubernetes metrics API
// (metrics.k8s.io, served by metrics-server).
type UsageSource interface {
	// Usage is the usage of every node the source has data for, by node
	// name, as of now. An error leaves every node without usage: frozen.
	Usage(ctx context.Context, now time.Time) (map[string]Usage, error)
	// Name names the source in logs, events and explanations.
	Name() string
}
