package metricsserver

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAPIServicePointsAtTheExternalNameService(t *testing.T) {
	api := metricsAPI(4443, []byte("CA"))
	if api.Name() != APIServiceName {
		t.Errorf("APIService named %q, want %q", api.Name(), APIServiceName)
	}
	obj := apiService(api)
	for path, want := range map[string]any{
		"spec.group":             "metrics.k8s.io",
		"spec.version":           "v1beta1",
		"spec.service.name":      ServiceName,
		"spec.service.namespace": Namespace,
		"spec.service.port":      int64(4443),
		"metadata.name":          APIServiceName,
		"spec.caBundle":          base64.StdEncoding.EncodeToString([]byte("CA")),
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(path, ".")...)
		if got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if insecure, found, _ := unstructured.NestedBool(obj.Object, "spec", "insecureSkipTLSVerify"); found || insecure {
		t.Error("the APIService skips TLS verification")
	}
	svc := service(api)
	if got, _, _ := unstructured.NestedString(svc.Object, "spec", "type"); got != "ExternalName" {
		t.Errorf("Service type %q, want ExternalName", got)
	}
	if got, _, _ := unstructured.NestedString(svc.Object, "spec", "externalName"); got != "localhost" {
		t.Errorf("externalName %q, want localhost", got)
	}
}

func TestRegisterAPIServiceRefusesAnIncompleteAPIService(t *testing.T) {
	complete := metricsAPI(4443, []byte("CA"))
	for name, edit := range map[string]func(*APIService){
		"no group":     func(s *APIService) { s.Group = "" },
		"no service":   func(s *APIService) { s.Service = "" },
		"no port":      func(s *APIService) { s.Port = 0 },
		"no CA bundle": func(s *APIService) { s.CABundle = nil },
	} {
		s := complete
		edit(&s)
		// The checks come before any client is made: a nil config is not read.
		if err := RegisterAPIService(context.Background(), nil, s, time.Second); err == nil {
			t.Errorf("%s: registered", name)
		}
	}
}

func TestAvailable(t *testing.T) {
	withCondition := func(status, reason string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Available", "status": status, "reason": reason, "message": "m"},
		}}}}
	}
	if ok, msg := available(withCondition("True", "Passed")); !ok {
		t.Errorf("Available=True read as not available: %s", msg)
	}
	if ok, msg := available(withCondition("False", "FailedDiscoveryCheck")); ok || msg != "Available=False FailedDiscoveryCheck: m" {
		t.Errorf("Available=False read as %v, %q", ok, msg)
	}
	if ok, _ := available(&unstructured.Unstructured{Object: map[string]any{}}); ok {
		t.Error("no conditions read as available")
	}
}
