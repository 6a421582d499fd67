package kwok

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// configObjects decodes Config into its documents.
func configObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(Config()), 4096)
	var objs []*unstructured.Unstructured
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decoding the kwok config: %v", err)
		}
		if obj == nil {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: obj})
	}
}

func TestConfigHoldsOurStagesAndMetrics(t *testing.T) {
	got := map[string]string{}
	for _, obj := range configObjects(t) {
		if obj.GetAPIVersion() != "kwok.x-k8s.io/v1alpha1" {
			t.Errorf("%s: apiVersion %q, want kwok.x-k8s.io/v1alpha1", obj.GetName(), obj.GetAPIVersion())
		}
		kind := obj.GetKind()
		if kind == "Stage" {
			ref, _, _ := unstructured.NestedString(obj.Object, "spec", "resourceRef", "kind")
			kind += "/" + ref
		}
		if _, dup := got[obj.GetName()]; dup {
			t.Errorf("two documents are named %s", obj.GetName())
		}
		got[obj.GetName()] = kind
	}
	want := map[string]string{
		"backfill-node-initialize":        "Stage/Node",
		"backfill-node-heartbeat":         "Stage/Node",
		"backfill-pod-ready":              "Stage/Pod",
		"backfill-training-succeeded":     "Stage/Pod",
		"backfill-training-failed":        "Stage/Pod",
		"backfill-pod-delete":             "Stage/Pod",
		"backfill-crash-loop-crash":       "Stage/Pod",
		"backfill-crash-loop-restart":     "Stage/Pod",
		"backfill-metrics-resource":       "Metric",
		"backfill-usage-from-annotations": "ClusterResourceUsage",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config documents (-want +got):\n%s", diff)
	}
}

// The operator's replica-tracking finalizer must outlive kwok: no stage may
// touch finalizers, and deletion waits until there are none.
func TestNoStageStripsFinalizers(t *testing.T) {
	for _, obj := range configObjects(t) {
		if obj.GetKind() != "Stage" {
			continue
		}
		steps, _, _ := unstructured.NestedSlice(obj.Object, "spec", "steps")
		for _, step := range steps {
			if _, ok := step.(map[string]any)["finalizers"]; ok {
				t.Errorf("stage %s modifies finalizers", obj.GetName())
			}
		}
		if _, ok, _ := unstructured.NestedMap(obj.Object, "spec", "next"); ok {
			t.Errorf("stage %s uses the deprecated spec.next; write spec.steps", obj.GetName())
		}
		if obj.GetName() == "backfill-pod-delete" && !strings.Contains(selectorText(obj), `'.metadata.finalizers' DoesNotExist`) {
			t.Errorf("backfill-pod-delete does not wait for the finalizers to go: %s", selectorText(obj))
		}
	}
}

func selectorText(obj *unstructured.Unstructured) string {
	exprs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "selector", "matchExpressions")
	var parts []string
	for _, e := range exprs {
		jq, _, _ := unstructured.NestedMap(e.(map[string]any), "jq")
		if jq != nil {
			parts = append(parts, "'"+jq["key"].(string)+"' "+jq["operator"].(string))
		}
	}
	return strings.Join(parts, ", ")
}

// The Go constants and the YAML must name the same annotations.
func TestConfigUsesTheAnnotationConstants(t *testing.T) {
	config := string(Config())
	for _, key := range []string{SimDurationAnnotation, SimExitCodeAnnotation, SimCrashLoopAnnotation, UsageCPUAnnotation, UsageMemoryAnnotation, SystemCPUAnnotation, SystemMemoryAnnotation} {
		if !strings.Contains(config, `"`+key+`"`) {
			t.Errorf("the config never reads %q", key)
		}
	}
}
