package devcluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// One replica of a job reports, as TF_CONFIG's chief would: the chief or
// master, else worker 0.
func TestReports(t *testing.T) {
	zero, one := int32(0), int32(1)
	job := func(specs map[kubeflowv1.ReplicaType]*int32) *kubeflowv1.TFJob {
		j := &kubeflowv1.TFJob{Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}}}
		for rt, n := range specs {
			j.Spec.TFReplicaSpecs[rt] = &kubeflowv1.ReplicaSpec{Replicas: n}
		}
		return j
	}
	pod := func(rt, index string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
			kubeflowv1.ReplicaTypeLabel: rt, kubeflowv1.ReplicaIndexLabel: index,
		}}}
	}
	withChief := job(map[kubeflowv1.ReplicaType]*int32{kubeflowv1.ReplicaTypeChief: &one, kubeflowv1.ReplicaTypeWorker: &one})
	workersOnly := job(map[kubeflowv1.ReplicaType]*int32{kubeflowv1.ReplicaTypeWorker: &one, kubeflowv1.ReplicaTypePS: &one})
	noChief := job(map[kubeflowv1.ReplicaType]*int32{"chief": &zero, kubeflowv1.ReplicaTypeWorker: &one})
	for _, tc := range []struct {
		name string
		job  *kubeflowv1.TFJob
		pod  *corev1.Pod
		want bool
	}{
		{"the chief", withChief, pod("chief", "0"), true},
		{"a worker beside a chief", withChief, pod("worker", "0"), false},
		{"worker 0 without a chief", workersOnly, pod("worker", "0"), true},
		{"worker 1", workersOnly, pod("worker", "1"), false},
		{"a parameter server", workersOnly, pod("ps", "0"), false},
		{"worker 0 beside a chief of 0 replicas", noChief, pod("worker", "0"), true},
		{"a master", job(map[kubeflowv1.ReplicaType]*int32{kubeflowv1.ReplicaTypeMaster: &one}), pod("master", "0"), true},
	} {
		if got := reports(tc.job, tc.pod); got != tc.want {
			t.Errorf("%s: reports %v, want %v", tc.name, got, tc.want)
		}
	}
}
