package colocation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func jobWithClasses(policy string, templates map[kubeflowv1.ReplicaType]string) *kubeflowv1.TFJob {
	job := &kubeflowv1.TFJob{Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}}}
	if policy != "" {
		job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: policy}
	}
	for rtype, class := range templates {
		job.Spec.TFReplicaSpecs[rtype] = &kubeflowv1.ReplicaSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{PriorityClassName: class}}}
	}
	return job
}

func TestJobPriorityClasses(t *testing.T) {
	cases := map[string]struct {
		job  *kubeflowv1.TFJob
		want []string
	}{
		"the offline class by default": {
			job:  jobWithClasses("", map[kubeflowv1.ReplicaType]string{kubeflowv1.ReplicaTypeWorker: "", kubeflowv1.ReplicaTypePS: ""}),
			want: []string{"offline"},
		},
		"the scheduling policy wins over the templates": {
			job:  jobWithClasses("team-low", map[kubeflowv1.ReplicaType]string{kubeflowv1.ReplicaTypeWorker: "training-high"}),
			want: []string{"team-low"},
		},
		"each template's class, in replica type order": {
			job: jobWithClasses("", map[kubeflowv1.ReplicaType]string{
				kubeflowv1.ReplicaTypeWorker: "w", kubeflowv1.ReplicaTypeChief: "c", kubeflowv1.ReplicaTypePS: "",
			}),
			want: []string{"c", "offline", "w"},
		},
		"no replicas": {job: jobWithClasses("", nil)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, JobPriorityClasses(tc.job, "offline")); diff != "" {
				t.Errorf("JobPriorityClasses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplicaPriorityClass(t *testing.T) {
	job := jobWithClasses("", map[kubeflowv1.ReplicaType]string{kubeflowv1.ReplicaTypeWorker: "w"})
	got := []string{
		ReplicaPriorityClass(job, kubeflowv1.ReplicaTypeWorker, "offline"),
		ReplicaPriorityClass(job, kubeflowv1.ReplicaTypePS, "offline"), // no such replica: the default
	}
	if diff := cmp.Diff([]string{"w", "offline"}, got); diff != "" {
		t.Errorf("ReplicaPriorityClass (-want +got):\n%s", diff)
	}
}
