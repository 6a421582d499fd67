package metricsserver

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAPIServicePointsAtTheExternalNameService(t *testing.T) {
	obj := apiService(4443, []byte("CA"))
	for path, want := range map[string]any{
		"spec.group":             "metrics.k8s.io",
		"spec.version":           "v1beta1",
		"spec.service.name":      ServiceName,
		"spec.service.namespace": Namespace,
		"spec.service.port":      int64(4443),
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
	svc := service()
	if got, _, _ := unstructured.NestedString(svc.Object, "spec", "type"); got != "ExternalName" {
		t.Errorf("Service type %q, want ExternalName", got)
	}
	if got, _, _ := unstructured.NestedString(svc.Object, "spec", "externalName"); got != "localhost" {
		t.Errorf("externalName %q, want localhost", got)
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
