package devcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/deploy/crds"
)

// installCRDs creates the TFJob CRD and waits until it is served.
func installCRDs(ctx context.Context, c client.Client) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(crds.TFJob, crd); err != nil {
		return fmt.Errorf("decoding the TFJob CRD: %w", err)
	}
	if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("installing the TFJob CRD: %w", err)
	}
	return poll(ctx, "the TFJob CRD to be established", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// waitForDefaultServiceAccount waits for the controller-manager to create
// the default namespace's ServiceAccount: pods cannot be admitted before.
func waitForDefaultServiceAccount(ctx context.Context, c client.Client) error {
	return poll(ctx, "the default ServiceAccount", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})
}

// waitNodesReady waits until n nodes report Ready.
func waitNodesReady(ctx context.Context, c client.Client, n int) error {
	return poll(ctx, fmt.Sprintf("%d nodes to be Ready", n), func(ctx context.Context) (bool, error) {
		var nodes corev1.NodeList
		if err := c.List(ctx, &nodes); err != nil {
			return false, err
		}
		ready := 0
		for _, node := range nodes.Items {
			if nodeReady(&node) {
				ready++
			}
		}
		return ready >= n, nil
	})
}

func nodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// poll checks cond every 200 ms until it holds, fails, or defaultWait passes.
func poll(ctx context.Context, what string, cond wait.ConditionWithContextFunc) error {
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, defaultWait, true, cond); err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}
