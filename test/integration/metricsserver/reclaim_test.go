//go:build integration

package metricsserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// offlineClass is the manager's default --offline-priority-class; the
// fixtures' offline pod is offline by its tier label instead.
const offlineClass = "backfill-offline"

// podList is the reclaim source's view of the pods: the fixtures.
type podList []*clusterview.Pod

func (l podList) Pods() []*clusterview.Pod { return l }

// The reclaim controller's metrics-api source takes each node's online use
// from the metrics API: the online pods' together, never the offline one's.
func TestReclaimSourceReadsOnlineUseFromMetricsAPI(t *testing.T) {
	var view podList
	for _, p := range fixturePods {
		view = append(view, clusterview.PodSummary(p.object(), offlineClass))
	}
	eventually(t, "online peaks from the metrics API", func(ctx context.Context) error {
		// A new source each time: its peak is the maximum over every
		// reading, which must not keep one from before all pods showed.
		settings := reclaim.DefaultSettings()
		settings.Window = time.Minute
		source, err := reclaim.NewMetricsAPISource(apiServer.Env.Config, view, settings)
		if err != nil {
			return err
		}
		usage, err := source.Usage(ctx, time.Now())
		if err != nil {
			return err
		}
		for _, node := range []string{busyNode, quietNode} {
			u, ok := usage[node]
			if !ok {
				return fmt.Errorf("no usage for node %s: %+v", node, usage)
			}
			if err := sameUsage(resourceList(u.OnlinePeak), nodeUsage(node, true)); err != nil {
				return fmt.Errorf("node %s online peak: %w", node, err)
			}
			// Every byte the node uses is its pods': nothing is left for
			// the system.
			if !u.SystemKnown || u.System.Memory != 0 {
				return fmt.Errorf("node %s system use %+v (known %v), want no memory", node, u.System, u.SystemKnown)
			}
		}
		return nil
	})
}

func resourceList(r reclaim.Resources) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(r.Memory, resource.BinarySI),
	}
}
