package devcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
)

// startMetricsServer serves the metrics API (`kubectl top`, the reclaim
// controller's metrics-api usage source): metrics-server on loopback,
// scraping the simulated nodes through kwok, registered with the
// apiserver's aggregation layer (whose front proxy prepare set up).
func (c *Cluster) startMetricsServer(ctx context.Context) error {
	if err := annotateResourceMetricsPaths(ctx, c.client); err != nil {
		return err
	}
	serving, err := metricsserver.WriteServing(filepath.Join(c.opts.StateDir, "pki"))
	if err != nil {
		return fmt.Errorf("writing metrics-server's serving certificate: %w", err)
	}
	ports, err := c.freePorts(1)
	if err != nil {
		return err
	}
	addr := loopback(ports[0])
	args := metricsserver.Args(metricsserver.Options{Kubeconfig: c.cp.kubeconfig, Port: ports[0], Serving: serving})
	if err := c.startChild("metrics-server", addr, args...); err != nil {
		return err
	}
	done := c.procs[len(c.procs)-1].Done()
	if err := metricsserver.WaitServing(ctx, addr, serving, done, time.Minute); err != nil {
		return err
	}
	return metricsserver.Register(ctx, c.config, ports[0], serving.CABundle, time.Minute)
}

// annotateResourceMetricsPaths tells metrics-server where on kwok's server
// each simulated node's kubelet metrics are.
func annotateResourceMetricsPaths(ctx context.Context, c client.Client) error {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return fmt.Errorf("listing the nodes: %w", err)
	}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		if node.Annotations[kwok.ManagedNodeAnnotation] != kwok.ManagedNodeValue {
			continue
		}
		patch := client.MergeFrom(node.DeepCopy())
		node.Annotations[kwok.ResourceMetricsPathAnnotation] = kwok.ResourceMetricsPath(node.Name)
		if err := c.Patch(ctx, node, patch); err != nil {
			return fmt.Errorf("annotating node %s with its resource metrics path: %w", node.Name, err)
		}
	}
	return nil
}
