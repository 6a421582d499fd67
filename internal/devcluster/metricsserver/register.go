package metricsserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// APIServiceName is the APIService of the metrics API.
const APIServiceName = "v1beta1.metrics.k8s.io"

// fieldManager owns what Register applies.
const fieldManager = "backfill-metrics-server"

var (
	serviceResource    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	apiServiceResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
)

// Register makes the apiserver of cfg serve metrics.k8s.io/v1beta1 from
// metrics-server on 127.0.0.1:port, whose certificate caBundle verifies,
// and waits until the apiserver reports the API available (it reached
// metrics-server's discovery through its front proxy). Applying again, as
// after a restart on another port, updates both objects.
func Register(ctx context.Context, cfg *rest.Config, port int, caBundle []byte, timeout time.Duration) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating a client for the APIService: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	apply := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if _, err := dyn.Resource(serviceResource).Namespace(Namespace).Apply(ctx, ServiceName, service(), apply); err != nil {
		return fmt.Errorf("applying Service %s/%s: %w", Namespace, ServiceName, err)
	}
	if _, err := dyn.Resource(apiServiceResource).Apply(ctx, APIServiceName, apiService(port, caBundle), apply); err != nil {
		return fmt.Errorf("applying APIService %s: %w", APIServiceName, err)
	}
	var last string
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		obj, err := dyn.Resource(apiServiceResource).Get(ctx, APIServiceName, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // retried until the timeout
		}
		ok, msg := available(obj)
		last = msg
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("APIService %s not available within %v (last: %s): %w", APIServiceName, timeout, last, err)
	}
	return nil
}

// service routes to localhost: the apiserver proxies an ExternalName
// Service's traffic to <externalName>:<the APIService's port>, where
// Endpoints and EndpointSlices refuse loopback addresses.
func service() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   map[string]any{"name": ServiceName, "namespace": Namespace},
		"spec":       map[string]any{"type": "ExternalName", "externalName": "localhost"},
	}}
}

// apiService registers metrics.k8s.io/v1beta1 at the Service, on port, with
// the CA that verifies metrics-server's serving certificate.
func apiService(port int, caBundle []byte) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiServiceResource.GroupVersion().String(),
		"kind":       "APIService",
		"metadata":   map[string]any{"name": APIServiceName},
		"spec": map[string]any{
			"group":   "metrics.k8s.io",
			"version": "v1beta1",
			"service": map[string]any{
				"namespace": Namespace,
				"name":      ServiceName,
				"port":      int64(port),
			},
			// Unstructured content holds JSON values only: bytes as base64.
			"caBundle": base64.StdEncoding.EncodeToString(caBundle),
			// metrics-server's own manifests' priorities.
			"groupPriorityMinimum": int64(100),
			"versionPriority":      int64(100),
		},
	}}
}

// available reports the APIService's Available condition, and its reason
// and message when it is not true.
func available(obj *unstructured.Unstructured) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		cond, _ := c.(map[string]any)
		if cond["type"] != "Available" {
			continue
		}
		if cond["status"] == "True" {
			return true, "Available"
		}
		return false, fmt.Sprintf("Available=%v %v: %v", cond["status"], cond["reason"], cond["message"])
	}
	return false, "no Available condition yet"
}
