package metricsserver

import (
	"context"
	"encoding/base64"
	"errors"
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

// APIService is an aggregated API, Group/Version, served on 127.0.0.1:Port
// by a server whose certificate CABundle (PEM) verifies, registered through
// the Service Namespace/Service. FieldManager owns what RegisterAPIService
// applies.
type APIService struct {
	Group, Version     string
	Namespace, Service string
	Port               int
	CABundle           []byte
	FieldManager       string
}

// Name is the APIService's name, <version>.<group>.
func (s APIService) Name() string { return s.Version + "." + s.Group }

// metricsAPI is metrics.k8s.io/v1beta1 served by metrics-server on port.
func metricsAPI(port int, caBundle []byte) APIService {
	return APIService{
		Group: "metrics.k8s.io", Version: "v1beta1",
		Namespace: Namespace, Service: ServiceName,
		Port: port, CABundle: caBundle, FieldManager: fieldManager,
	}
}

// Register makes the apiserver of cfg serve metrics.k8s.io/v1beta1 from
// metrics-server on 127.0.0.1:port, whose certificate caBundle verifies,
// and waits until the apiserver reports the API available (it reached
// metrics-server's discovery through its front proxy). Applying again, as
// after a restart on another port, updates both objects.
func Register(ctx context.Context, cfg *rest.Config, port int, caBundle []byte, timeout time.Duration) error {
	return RegisterAPIService(ctx, cfg, metricsAPI(port, caBundle), timeout)
}

// RegisterAPIService makes the apiserver of cfg serve s's API from its
// server on loopback, through an ExternalName Service "localhost" (see the
// package's doc), and waits until the apiserver reports the API available.
// Applying again, as after a restart on another port, updates both objects.
// The namespace must exist.
func RegisterAPIService(ctx context.Context, cfg *rest.Config, s APIService, timeout time.Duration) error {
	if s.Group == "" || s.Version == "" || s.Namespace == "" || s.Service == "" || s.Port <= 0 || s.FieldManager == "" {
		return fmt.Errorf("APIService %+v: group, version, namespace, service, port and field manager are all required", s)
	}
	if len(s.CABundle) == 0 {
		return errors.New("APIService " + s.Name() + ": no CA bundle: the apiserver could not verify the server's certificate")
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating a client for the APIService: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	apply := metav1.ApplyOptions{FieldManager: s.FieldManager, Force: true}
	if _, err := dyn.Resource(serviceResource).Namespace(s.Namespace).Apply(ctx, s.Service, service(s), apply); err != nil {
		return fmt.Errorf("applying Service %s/%s: %w", s.Namespace, s.Service, err)
	}
	if _, err := dyn.Resource(apiServiceResource).Apply(ctx, s.Name(), apiService(s), apply); err != nil {
		return fmt.Errorf("applying APIService %s: %w", s.Name(), err)
	}
	last := "not read yet"
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		obj, err := dyn.Resource(apiServiceResource).Get(ctx, s.Name(), metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // retried until the timeout
		}
		ok, msg := available(obj)
		last = msg
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("APIService %s not available within %v (last: %s): %w", s.Name(), timeout, last, err)
	}
	return nil
}

// service routes to localhost: the apiserver proxies an ExternalName
// Service's traffic to <externalName>:<the APIService's port>, where
// Endpoints and EndpointSlices refuse loopback addresses.
func service(s APIService) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   map[string]any{"name": s.Service, "namespace": s.Namespace},
		"spec":       map[string]any{"type": "ExternalName", "externalName": "localhost"},
	}}
}

// apiService registers s's group and version at its Service, on its port,
// with the CA that verifies its server's serving certificate.
func apiService(s APIService) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiServiceResource.GroupVersion().String(),
		"kind":       "APIService",
		"metadata":   map[string]any{"name": s.Name()},
		"spec": map[string]any{
			"group":   s.Group,
			"version": s.Version,
			"service": map[string]any{
				"namespace": s.Namespace,
				"name":      s.Service,
				"port":      int64(s.Port),
			},
			// Unstructured content holds JSON values only: bytes as base64.
			"caBundle": base64.StdEncoding.EncodeToString(s.CABundle),
			// metrics-server's and KEDA's own manifests' priorities.
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
