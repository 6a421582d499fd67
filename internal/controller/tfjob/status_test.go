package tfjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func TestStatusEqual(t *testing.T) {
	t1, t2 := metav1.NewTime(testNow), metav1.NewTime(testNow.Add(time.Minute))
	cases := map[string]struct {
		a, b kubeflowv1.JobStatus
		want bool
	}{
		"empty":                          {want: true},
		"only lastReconcileTime differs": {a: kubeflowv1.JobStatus{LastReconcileTime: &t1}, b: kubeflowv1.JobStatus{LastReconcileTime: &t2}, want: true},
		"startTime differs":              {a: kubeflowv1.JobStatus{StartTime: &t1}, b: kubeflowv1.JobStatus{StartTime: &t2}},
		"restarts differ":                {a: kubeflowv1.JobStatus{Restarts: 1}},
		"nil and empty countedPods":      {a: kubeflowv1.JobStatus{CountedPods: []string{}}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := statusEqual(tc.a, tc.b); got != tc.want {
				t.Errorf("statusEqual = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMetav1TimeTruncatesToSeconds(t *testing.T) {
	got := metav1Time(testNow.Add(999 * time.Millisecond))
	if diff := cmp.Diff(metav1.NewTime(testNow), got); diff != "" {
		t.Errorf("metav1Time (-want +got):\n%s", diff)
	}
}

func TestManagedHere(t *testing.T) {
	cases := map[string]struct {
		managedBy *string
		want      bool
	}{
		"unset":              {want: true},
		"training-operator":  {managedBy: ptr(kubeflowv1.ManagedByTrainingOperator), want: true},
		"MultiKueue":         {managedBy: ptr(kubeflowv1.ManagedByMultiKueue)},
		"some other manager": {managedBy: ptr("example.com/other")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := makeJob("j").replicas(Worker, 1, Never).obj()
			job.Spec.RunPolicy.ManagedBy = tc.managedBy
			if got := managedHere(job); got != tc.want {
				t.Errorf("managedHere = %v, want %v", got, tc.want)
			}
		})
	}
}
