package colocation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func list(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func TestToBatchResources(t *testing.T) {
	noRules := ContainerRulesOf(nil)
	cases := map[string]struct {
		spec         corev1.PodSpec
		rules        ContainerRules
		want         corev1.PodSpec
		wantOriginal string
	}{
		"requests and limits: zero requests, the template's limits kept": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
				Requests: list("cpu", "1500m", "memory", "3Gi"), Limits: list("cpu", "3", "memory", "6Gi")}}}},
			rules: noRules,
			want: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
				Requests: list("backfill.dev/batch-cpu", "1500", "backfill.dev/batch-memory", "3Gi", "cpu", "0", "memory", "0"),
				Limits:   list("backfill.dev/batch-cpu", "1500", "backfill.dev/batch-memory", "3Gi", "cpu", "3", "memory", "6Gi")}}}},
			wantOriginal: `{"tensorflow":{"limits":{"cpu":"3","memory":"6Gi"},"requests":{"cpu":"1500m","memory":"3Gi"}}}`,
		},
		"only a limit: the request Kubernetes would default": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
				Limits: list("cpu", "2", "nvidia.com/gpu", "1")}}}},
			rules: noRules,
			want: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
				Requests: list("backfill.dev/batch-cpu", "2000", "cpu", "0", "memory", "0"),
				Limits:   list("backfill.dev/batch-cpu", "2000", "nvidia.com/gpu", "1", "cpu", "2")}}}},
			wantOriginal: `{"tensorflow":{"limits":{"cpu":"2"}}}`,
		},
		"init containers and sidecars too; a container without cpu or memory gets zero requests": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "fetch", Resources: corev1.ResourceRequirements{Requests: list("memory", "1Gi")}}},
				Containers:     []corev1.Container{{Name: "tensorflow"}},
			},
			rules: noRules,
			want: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "fetch", Resources: corev1.ResourceRequirements{
					Requests: list("backfill.dev/batch-memory", "1Gi", "cpu", "0", "memory", "0"), Limits: list("backfill.dev/batch-memory", "1Gi")}}},
				Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{Requests: list("cpu", "0", "memory", "0")}}},
			},
			wantOriginal: `{"fetch":{"requests":{"memory":"1Gi"}}}`,
		},
		"a LimitRange's defaults never cap below the request; its minimum and ratio raise the request": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
				Requests: list("cpu", "2", "memory", "1Gi")}}}},
			rules: ContainerRules{
				Default:  list("cpu", "500m", "memory", "4Gi"),
				Min:      list("cpu", "10m"),
				MaxRatio: list("memory", "8"),
			},
			want: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
				Requests: list("backfill.dev/batch-cpu", "2000", "backfill.dev/batch-memory", "1Gi", "cpu", "10m", "memory", "512Mi"),
				Limits:   list("backfill.dev/batch-cpu", "2000", "backfill.dev/batch-memory", "1Gi", "cpu", "2", "memory", "4Gi")}}}},
			wantOriginal: `{"tensorflow":{"requests":{"cpu":"2","memory":"1Gi"}}}`,
		},
		"pod-level resources: left on requested capacity": {
			spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: list("cpu", "4")},
				Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{Requests: list("cpu", "1")}}}},
			rules: noRules,
			want: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: list("cpu", "4")},
				Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{Requests: list("cpu", "1")}}}},
		},
		"no cpu or memory anywhere": {
			spec:  corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{Limits: list("nvidia.com/gpu", "1")}}}},
			rules: noRules,
			want:  corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{Limits: list("nvidia.com/gpu", "1")}}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := *tc.spec.DeepCopy()
			original, err := ToBatchResources(&spec, tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, spec, quantities); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if original != tc.wantOriginal {
				t.Errorf("original = %s, want %s", original, tc.wantOriginal)
			}
		})
	}
}

// quantities compares quantities by value, not by how they are written.
var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestBatchOf(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
		Requests: list("cpu", "1500m", "memory", "3Gi")}}}}
	if _, err := ToBatchResources(&spec, ContainerRulesOf(nil)); err != nil {
		t.Fatal(err)
	}
	if b := BatchOf(spec.Containers[0].Resources.Requests); b != (Resources{MilliCPU: 1500, Memory: 3 << 30}) {
		t.Errorf("BatchOf = %+v, want cpu 1500m, memory 3Gi", b)
	}
}

func TestValidateCapacity(t *testing.T) {
	for value, ok := range map[string]bool{"": true, "reclaimed": true, "requested": true, "Requested": false, "idle": false} {
		annotations := map[string]string{}
		if value != "" {
			annotations[CapacityAnnotation] = value
		}
		if err := ValidateCapacity(annotations); (err == nil) != ok {
			t.Errorf("ValidateCapacity(%q) = %v", value, err)
		}
	}
}
