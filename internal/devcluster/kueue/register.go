package kueue

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// pollInterval is how often the waits here look again.
const pollInterval = 200 * time.Millisecond

// InstallCRDs creates Kueue's CRDs from the manifests next to the binary
// and waits until the apiserver serves them. Kueue must not start before:
// it watches them from its first second.
func InstallCRDs(ctx context.Context, cfg *rest.Config, binDir string, timeout time.Duration) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	paths, err := filepath.Glob(filepath.Join(binDir, "kueue-manifests", "crd", "*.yaml"))
	if err != nil || len(paths) == 0 {
		return fmt.Errorf("no Kueue CRDs in %s: run `make queue-tools` in a backfill checkout", filepath.Join(binDir, "kueue-manifests", "crd"))
	}
	var names []string
	for _, path := range paths {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decodeFile(path, crd); err != nil {
			return err
		}
		if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("installing CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	return wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, err
			}
			if !established(crd) {
				return false, nil
			}
		}
		return true, nil
	})
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
		return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
	})
}

// Object is a Kueue object (ResourceFlavor, ClusterQueue, LocalQueue...)
// of Kueue's v1beta2 API, read as unstructured: backfill does not depend
// on Kueue's Go module.
func Object(kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: kind})
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// Webhook configuration names, as Kueue's own install names them.
const (
	MutatingWebhookName   = "kueue-mutating-webhook-configuration"
	ValidatingWebhookName = "kueue-validating-webhook-configuration"
)

// RegisterWebhooks registers the webhooks of Kueue's manifests that serve
// TFJobs and Kueue's own objects, by URL on 127.0.0.1 with k's CA. Those
// of the integrations left off (pods, Deployments, batch Jobs...) are not
// registered: with failurePolicy Fail they would put Kueue in the way of
// every pod the cluster creates.
func RegisterWebhooks(ctx context.Context, c client.Client, binDir string, k *Kueue) error {
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	path := filepath.Join(binDir, "kueue-manifests", "webhooks.yaml")
	if err := decodeFile(path, mutating, validating); err != nil {
		return err
	}
	mutating.Webhooks = slices.DeleteFunc(mutating.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return !served(w.Rules) })
	validating.Webhooks = slices.DeleteFunc(validating.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return !served(w.Rules) })
	for i := range mutating.Webhooks {
		mutating.Webhooks[i].ClientConfig = k.clientConfig(mutating.Webhooks[i].ClientConfig)
	}
	for i := range validating.Webhooks {
		validating.Webhooks[i].ClientConfig = k.clientConfig(validating.Webhooks[i].ClientConfig)
	}
	mutating.ObjectMeta = metav1.ObjectMeta{Name: MutatingWebhookName}
	validating.ObjectMeta = metav1.ObjectMeta{Name: ValidatingWebhookName}
	for _, obj := range []client.Object{mutating, validating} {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("registering %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

// served says the webhook's rules concern TFJobs or Kueue's own objects.
func served(rules []admissionregistrationv1.RuleWithOperations) bool {
	return slices.ContainsFunc(rules, func(r admissionregistrationv1.RuleWithOperations) bool {
		return slices.Contains(r.APIGroups, "kueue.x-k8s.io") ||
			slices.Contains(r.APIGroups, "kubeflow.org") && slices.Contains(r.Resources, "tfjobs")
	})
}

// clientConfig points a webhook at Kueue on loopback, on the path the
// manifest gives for its Service.
func (k *Kueue) clientConfig(from admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.WebhookClientConfig {
	path := ""
	if from.Service != nil && from.Service.Path != nil {
		path = *from.Service.Path
	}
	url := fmt.Sprintf("https://127.0.0.1:%d%s", k.WebhookPort, path)
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: k.CABundle}
}

// WaitReady waits until Kueue answers /readyz, which it does once its
// webhook server serves, or fails when p, Kueue's process, exits first.
func (k *Kueue) WaitReady(ctx context.Context, p *process.Process, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	url := "http://" + k.HealthAddress + "/readyz"
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.Done():
			return false, fmt.Errorf("kueue exited: see %s", p.LogPath())
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Kueue to be ready: %w", err)
	}
	return nil
}

// decodeFile decodes the YAML documents of path into objs, in order.
func decodeFile(path string, objs ...any) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w (run `make queue-tools` in a backfill checkout)", path, err)
	}
	defer func() { _ = f.Close() }()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 64*1024)
	for _, obj := range objs {
		if err := dec.Decode(obj); err != nil {
			return errors.Join(fmt.Errorf("decoding %s", path), err)
		}
	}
	return nil
}
