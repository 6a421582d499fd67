package devcluster

import (
	"context"
	"fmt"
	"path/filepath"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/devcluster/kueue"
)

// The queue `backfill dev --kueue` makes ready: LocalQueue QueueName in
// QueueNamespace, of ClusterQueue QueueName, whose quota is below what the
// simulated nodes hold, so that jobs beyond it visibly wait.
const (
	QueueName      = "training"
	QueueNamespace = "ml-dev"
	queueFlavor    = "default-flavor"
)

// queueQuota is the ClusterQueue's quota: 4 of the 16 GPUs of the default
// cluster, and CPU and memory to go with them.
var queueQuota = map[string]string{"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "4"}

// startKueue runs Kueue with its TFJob integration on, registers its
// webhooks, and creates the ready-to-use queue.
func (c *Cluster) startKueue(ctx context.Context) error {
	if err := kueue.InstallCRDs(ctx, c.config, c.opts.BinDir, defaultWait); err != nil {
		return err
	}
	k, err := kueue.Prepare(kueue.Options{BinDir: c.opts.BinDir, Kubeconfig: c.cp.kubeconfig, Dir: filepath.Join(c.opts.StateDir, "kueue")})
	if err != nil {
		return err
	}
	if err := c.startCommand("kueue", k.HealthAddress, k.Binary, k.Args...); err != nil {
		return err
	}
	if err := kueue.RegisterWebhooks(ctx, c.client, c.opts.BinDir, k); err != nil {
		return err
	}
	if err := k.WaitReady(ctx, c.procs[len(c.procs)-1], defaultWait); err != nil {
		return err
	}
	return createQueue(ctx, c.client)
}

// createQueue makes the ResourceFlavor of every node, the ClusterQueue
// with its quota (a job may preempt lower-priority ones within it), and
// the LocalQueue users submit to.
func createQueue(ctx context.Context, c client.Client) error {
	if err := ensureNamespace(ctx, c, QueueNamespace); err != nil {
		return err
	}
	var quotas []any
	for _, name := range []string{"cpu", "memory", "nvidia.com/gpu"} {
		quotas = append(quotas, map[string]any{"name": name, "nominalQuota": queueQuota[name]})
	}
	objects := []*unstructured.Unstructured{
		kueue.Object("ResourceFlavor", "", queueFlavor, map[string]any{}),
		kueue.Object("ClusterQueue", "", QueueName, map[string]any{
			"namespaceSelector": map[string]any{},
			"preemption":        map[string]any{"withinClusterQueue": "LowerPriority"},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
				"flavors":          []any{map[string]any{"name": queueFlavor, "resources": quotas}},
			}},
		}),
		kueue.Object("LocalQueue", QueueNamespace, QueueName, map[string]any{"clusterQueue": QueueName}),
	}
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}
