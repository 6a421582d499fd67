package colocation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func ownedBy(apiVersion, kind string, controller bool) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{
		APIVersion: apiVersion, Kind: kind, Name: "owner", Controller: ptr.To(controller),
	}}}}
}

func TestPodTier(t *testing.T) {
	cases := map[string]struct {
		pod  *corev1.Pod
		want Tier
	}{
		"controlled by a TFJob":                    {pod: ownedBy("kubeflow.org/v1", "TFJob", true), want: TierOffline},
		"controlled by a TFJob of another version": {pod: ownedBy("kubeflow.org/v2alpha1", "TFJob", true), want: TierOffline},
		"owned but not controlled by a TFJob":      {pod: ownedBy("kubeflow.org/v1", "TFJob", false), want: TierOnline},
		"controlled by a TFJob of another group":   {pod: ownedBy("example.com/v1", "TFJob", true), want: TierOnline},
		"controlled by a ReplicaSet":               {pod: ownedBy("apps/v1", "ReplicaSet", true), want: TierOnline},
		"offline priority class": {
			pod: &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: DefaultOfflinePriorityClass}}, want: TierOffline,
		},
		"another priority class": {
			pod: &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "system-cluster-critical"}}, want: TierOnline,
		},
		"offline label": {
			pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{TierLabel: "offline"}}}, want: TierOffline,
		},
		"online label": {
			pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{TierLabel: "online"}}}, want: TierOnline,
		},
		"plain pod": {pod: &corev1.Pod{}, want: TierOnline},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PodTier(tc.pod, DefaultOfflinePriorityClass)); diff != "" {
				t.Errorf("PodTier (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodTierWithoutOfflineClass(t *testing.T) {
	// An empty class name must not make every pod without a class offline.
	if got := PodTier(&corev1.Pod{}, ""); got != TierOnline {
		t.Errorf("PodTier of a pod without a class, no offline class = %q, want %q", got, TierOnline)
	}
}

func TestControllingTFJob(t *testing.T) {
	type answer struct {
		Name string
		OK   bool
	}
	cases := map[string]struct {
		pod  *corev1.Pod
		want answer
	}{
		"controlled by a TFJob":                    {pod: ownedBy("kubeflow.org/v1", "TFJob", true), want: answer{"owner", true}},
		"controlled by a TFJob of another version": {pod: ownedBy("kubeflow.org/v2alpha1", "TFJob", true), want: answer{"owner", true}},
		"owned but not controlled by a TFJob":      {pod: ownedBy("kubeflow.org/v1", "TFJob", false)},
		"controlled by a TFJob of another group":   {pod: ownedBy("example.com/v1", "TFJob", true)},
		"controlled by a TFJob of the core group":  {pod: ownedBy("v1", "TFJob", true)},
		"controlled by a ReplicaSet":               {pod: ownedBy("apps/v1", "ReplicaSet", true)},
		"no owner":                                 {pod: &corev1.Pod{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got answer
			got.Name, got.OK = ControllingTFJob(tc.pod)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ControllingTFJob (-want +got):\n%s", diff)
			}
		})
	}
}
