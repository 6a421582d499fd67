//go:build integration

package metricsserver

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Through the apiserver, metrics.k8s.io/v1beta1 reports each pod's
// container usage as its kwok annotations say, and each node's as the sum
// of its pods'.
func TestMetricsAPIReportsKwokUsage(t *testing.T) {
	metrics := metricsClient(t)
	for _, p := range fixturePods {
		eventually(t, "PodMetrics "+p.name, func(ctx context.Context) error {
			pm, err := metrics.PodMetricses(namespace).Get(ctx, p.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(pm.Containers) != 1 || pm.Containers[0].Name != "app" {
				return fmt.Errorf("containers %+v, want the one named app", pm.Containers)
			}
			return sameUsage(pm.Containers[0].Usage, p.usage())
		})
	}
	for _, node := range []string{busyNode, quietNode} {
		want := nodeUsage(node, false)
		eventually(t, "NodeMetrics "+node, func(ctx context.Context) error {
			nm, err := metrics.NodeMetricses().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			return sameUsage(nm.Usage, want)
		})
	}
}

// The list `kubectl top pods` reads holds the suite's pods, and nothing of
// another namespace.
func TestPodMetricsListIsNamespaced(t *testing.T) {
	metrics := metricsClient(t)
	eventually(t, "PodMetrics list", func(ctx context.Context) error {
		list, err := metrics.PodMetricses(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		got := map[string]corev1.ResourceList{}
		for _, pm := range list.Items {
			if pm.Namespace != namespace {
				return fmt.Errorf("listed %s/%s from another namespace", pm.Namespace, pm.Name)
			}
			if len(pm.Containers) == 1 {
				got[pm.Name] = pm.Containers[0].Usage
			}
		}
		var errs []error
		for _, p := range fixturePods {
			usage, ok := got[p.name]
			if !ok {
				errs = append(errs, fmt.Errorf("%s not listed", p.name))
				continue
			}
			if err := sameUsage(usage, p.usage()); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
			}
		}
		return errors.Join(errs...)
	})
}
