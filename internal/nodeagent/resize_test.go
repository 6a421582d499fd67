package nodeagent

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResizeOf(t *testing.T) {
	cpu := func(request, limit string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(request)},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limit)},
		}
	}
	pod := func(spec corev1.ResourceRequirements, applied *corev1.ResourceRequirements, conditions ...corev1.PodConditionType) *corev1.Pod {
		p := &corev1.Pod{
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: spec}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "tensorflow", Resources: applied}}},
		}
		for _, c := range conditions {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return p
	}
	applied := cpu("1", "2")
	cases := map[string]struct {
		pod  *corev1.Pod
		want Resize
	}{
		"applied as asked":                       {pod: pod(cpu("1", "2"), &applied), want: ResizeNone},
		"the same amounts written otherwise":     {pod: pod(cpu("1000m", "2000m"), &applied), want: ResizeNone},
		"a kubelet that reports nothing applied": {pod: pod(cpu("1", "4"), nil), want: ResizeNone},
		"a new limit the kubelet has not seen":   {pod: pod(cpu("1", "4"), &applied), want: ResizeAsked},
		"a new request the kubelet has not seen": {pod: pod(cpu("1500m", "2"), &applied), want: ResizeAsked},
		"put off by the kubelet":                 {pod: pod(cpu("1", "4"), &applied, corev1.PodResizePending), want: ResizeAsked},
		"being applied":                          {pod: pod(cpu("1", "4"), &applied, corev1.PodResizeInProgress), want: ResizeApplying},
		"applied, the status not written yet":    {pod: pod(cpu("1", "2"), &applied, corev1.PodResizeInProgress), want: ResizeApplying},
		"a new one asked while one is applied":   {pod: pod(cpu("1", "4"), &applied, corev1.PodResizePending, corev1.PodResizeInProgress), want: ResizeApplying},
		"pod-level resources resized": {
			pod: func() *corev1.Pod {
				p := pod(cpu("1", "2"), &applied)
				spec, status := cpu("1", "4"), cpu("1", "2")
				p.Spec.Resources, p.Status.Resources = &spec, &status
				return p
			}(),
			want: ResizeAsked,
		},
		"a condition that is false": {
			pod: func() *corev1.Pod {
				p := pod(cpu("1", "2"), &applied, corev1.PodResizeInProgress)
				p.Status.Conditions[0].Status = corev1.ConditionFalse
				return p
			}(),
			want: ResizeNone,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := podOf(tc.pod, "").Resize; got != tc.want {
				t.Errorf("podOf(...).Resize = %d, want %d", got, tc.want)
			}
		})
	}
}
