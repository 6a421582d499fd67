package tfjob

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestMakesRoom(t *testing.T) {
	status := func(used, hard string) corev1.ResourceQuotaStatus {
		return corev1.ResourceQuotaStatus{
			Used: corev1.ResourceList{corev1.ResourceLimitsCPU: resource.MustParse(used)},
			Hard: corev1.ResourceList{corev1.ResourceLimitsCPU: resource.MustParse(hard)},
		}
	}
	cases := map[string]struct {
		before, after corev1.ResourceQuotaStatus
		want          bool
	}{
		"use falls":                        {status("4", "4"), status("2", "4"), true},
		"the limit rises":                  {status("4", "4"), status("4", "8"), true},
		"use rises":                        {status("2", "4"), status("4", "4"), false},
		"the limit falls":                  {status("2", "8"), status("2", "4"), false},
		"nothing changes":                  {status("2", "4"), status("2", "4"), false},
		"a new resource is capped":         {status("2", "4"), corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{corev1.ResourceLimitsCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("10")}}, true},
		"the controller first fills it in": {corev1.ResourceQuotaStatus{}, status("0", "4"), true},
	}
	for name, tc := range cases {
		if got := makesRoom(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: makesRoom = %v, want %v", name, got, tc.want)
		}
	}
}

func TestRefusedJobsWake(t *testing.T) {
	s := newRefusedJobs()
	a1, a2, b := types.NamespacedName{Namespace: "a", Name: "1"}, types.NamespacedName{Namespace: "a", Name: "2"}, types.NamespacedName{Namespace: "b", Name: "1"}
	s.note(a1, true)
	s.note(a2, true)
	s.note(b, true)
	s.note(a2, false) // created its pods since
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "team"}}
	got := s.wake(context.Background(), quota)
	if len(got) != 1 || got[0].NamespacedName != a1 {
		t.Errorf("a quota of namespace a woke %v, want only %v: the refused job of its namespace", got, a1)
	}
}
