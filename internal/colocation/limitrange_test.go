package colocation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestContainerRulesOf(t *testing.T) {
	ranges := []corev1.LimitRange{
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer, Min: list("cpu", "50m", "memory", "64Mi"), Max: list("cpu", "4"),
				Default: list("cpu", "2", "memory", "1Gi"), MaxLimitRequestRatio: list("cpu", "20")},
		}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypePod, Max: list("cpu", "1")},
			{Type: corev1.LimitTypeContainer, Min: list("cpu", "10m"), Max: list("cpu", "8", "memory", "16Gi"),
				Default: list("cpu", "500m"), MaxLimitRequestRatio: list("cpu", "10")},
		}}},
	}
	want := ContainerRules{
		Min:      list("cpu", "50m", "memory", "64Mi"),
		Default:  list("cpu", "500m", "memory", "1Gi"),
		MaxRatio: list("cpu", "10"),
	}
	if diff := cmp.Diff(want, ContainerRulesOf(ranges), quantities); diff != "" {
		t.Errorf("rules (-want +got): the strictest minimum and ratio, the default of the first by name; Pod items ignored\n%s", diff)
	}
}

func TestReclaimedCPUAndMemory(t *testing.T) {
	cases := map[string]struct {
		template corev1.ResourceRequirements
		rules    ContainerRules
		want     corev1.ResourceRequirements
	}{
		"no rules: zero requests, the template's limits": {
			template: corev1.ResourceRequirements{Requests: list("cpu", "1", "memory", "1Gi"), Limits: list("cpu", "2", "memory", "2Gi")},
			want:     corev1.ResourceRequirements{Requests: list("cpu", "0", "memory", "0"), Limits: list("cpu", "2", "memory", "2Gi")},
		},
		"a default above the request is what the LimitRange gives": {
			template: corev1.ResourceRequirements{Requests: list("cpu", "1")},
			rules:    ContainerRules{Default: list("cpu", "4")},
			want:     corev1.ResourceRequirements{Requests: list("cpu", "0", "memory", "0"), Limits: list("cpu", "4")},
		},
		"the template's own limit beats a default": {
			template: corev1.ResourceRequirements{Limits: list("memory", "2Gi")},
			rules:    ContainerRules{Default: list("memory", "4Gi")},
			want:     corev1.ResourceRequirements{Requests: list("cpu", "0", "memory", "0"), Limits: list("memory", "2Gi")},
		},
		"the ratio applies to a defaulted limit too, rounded up": {
			template: corev1.ResourceRequirements{},
			rules:    ContainerRules{Default: list("cpu", "1"), MaxRatio: list("cpu", "3")},
			want:     corev1.ResourceRequirements{Requests: list("cpu", "334m", "memory", "0"), Limits: list("cpu", "1")},
		},
		"a minimum above the ratio's floor wins": {
			template: corev1.ResourceRequirements{Limits: list("cpu", "1")},
			rules:    ContainerRules{Min: list("cpu", "200m"), MaxRatio: list("cpu", "10")},
			want:     corev1.ResourceRequirements{Requests: list("cpu", "200m", "memory", "0"), Limits: list("cpu", "1")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, reclaimedCPUAndMemory(tc.template, tc.rules), quantities); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
