package nodeagent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

func TestPodOf(t *testing.T) {
	container := func(name string, resources corev1.ResourceRequirements) corev1.Container {
		return corev1.Container{Name: name, Resources: resources}
	}
	list := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	statuses := []corev1.ContainerStatus{{Name: "tensorflow", ContainerID: "containerd://abc"}, {Name: "sidecar", ContainerID: "containerd://def"}}
	cases := map[string]struct {
		pod  corev1.Pod
		want Pod
	}{
		"reclaimed, limits on every container": {
			pod: corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{colocation.TierLabel: "offline"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					container("tensorflow", corev1.ResourceRequirements{Requests: list("backfill.dev/batch-cpu", "1500"), Limits: list("cpu", "2", "backfill.dev/batch-cpu", "1500")}),
					container("sidecar", corev1.ResourceRequirements{Limits: list("cpu", "500m")}),
				}},
				Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable, ContainerStatuses: statuses}},
			want: Pod{QOS: corev1.PodQOSBurstable, Reclaimed: true, Weight: 2500,
				Limits: nodefs.Limits{Pod: 250000, Containers: map[string]int64{"abc": 200000, "def": 50000}}}},
		"reclaimed, a container without a limit: no pod quota, weight from batch-cpu": {
			pod: corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{colocation.TierLabel: "offline"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					container("tensorflow", corev1.ResourceRequirements{Requests: list("backfill.dev/batch-cpu", "1500"), Limits: list("backfill.dev/batch-cpu", "1500")}),
					container("sidecar", corev1.ResourceRequirements{Limits: list("cpu", "500m")}),
				}},
				Status: corev1.PodStatus{QOSClass: corev1.PodQOSBestEffort, ContainerStatuses: statuses}},
			want: Pod{QOS: corev1.PodQOSBestEffort, Reclaimed: true, Weight: 1500,
				Limits: nodefs.Limits{Pod: -1, Containers: map[string]int64{"abc": -1, "def": 50000}}}},
		"offline on requested capacity is protected as online": {
			pod: corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{colocation.TierLabel: "offline"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					container("tensorflow", corev1.ResourceRequirements{Requests: list("cpu", "1")}),
				}},
				Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable}},
			want: Pod{QOS: corev1.PodQOSBurstable, Weight: 1, Limits: nodefs.Limits{Pod: -1, Containers: map[string]int64{}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, podOf(&tc.pod, "")); diff != "" {
				t.Errorf("podOf (-want +got):\n%s", diff)
			}
		})
	}
}
