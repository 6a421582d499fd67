package devcluster

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/examples"
)

// demoFiles are the example manifests the demo applies, unchanged: the
// online service first, then the training. The seed's value-100
// PriorityClass is left out: it would rank training above online work.
func demoFiles() ([]string, error) {
	files, err := fs.Glob(examples.FS, "tfjob-*.yaml")
	if err != nil {
		return nil, err
	}
	return append([]string{"online-web.yaml"}, files...), nil
}

// loadDemo applies the demo manifests, creating their namespaces, after
// the GPU inference (inference.go) so that the example training finds the
// GPUs its night leaves.
func (c *Cluster) loadDemo(ctx context.Context) error {
	files, err := demoFiles()
	if err != nil {
		return err
	}
	// The day starts at the last whole minute: the GPU inference's KEDA
	// cron windows count whole minutes.
	c.day = clock{start: time.Now().Truncate(time.Minute), dayLength: c.opts.DayLength}
	if c.opts.runsInference() {
		if err := c.loadInference(ctx); err != nil {
			return err
		}
	}
	for _, file := range files {
		data, err := fs.ReadFile(examples.FS, file)
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := ensureNamespace(ctx, c.client, obj.GetNamespace()); err != nil {
			return err
		}
		if err := c.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("applying %s: %w", file, err)
		}
		fmt.Fprintf(c.out, "  applied %s (%s %s/%s)\n", file, strings.ToLower(obj.GetKind()), obj.GetNamespace(), obj.GetName())
	}
	c.startDay()
	return nil
}

// startDay sets the online service's use going through its compressed
// day, from midnight, and the backlogs of training jobs arriving.
func (c *Cluster) startDay() {
	ctx, cancel := context.WithCancel(context.Background())
	c.stopDemo = cancel
	go runOnlineDay(ctx, c.client, c.day)
	go runBacklog(ctx, c.client, c.day)
	fmt.Fprintf(c.out, "  the online service's day runs in %v (an hour every %v); CPU training jobs keep arriving (label %s=backlog)\n",
		c.opts.DayLength, c.opts.DayLength/24, BacklogLabel)
	if c.opts.runsInference() && c.opts.gpuBacklogWorkers() > 0 {
		go c.opts.runGPUBacklog(ctx, c.client, c.day)
		fmt.Fprintf(c.out, "  from the first evening, GPU training jobs of %d GPUs arrive from %02.0f:00 to %02.0f:00 (label %s=%s) and borrow the inference's GPUs until the morning (GPU loans)\n",
			c.opts.gpuBacklogWorkers(), inferenceEvening, gpuBacklogLastHour, BacklogLabel, gpuBacklogValue)
	}
}

// ensureNamespace creates a namespace unless it exists, and waits for its
// default ServiceAccount, without which pods are refused.
func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return poll(ctx, "the default ServiceAccount of "+name, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})
}
