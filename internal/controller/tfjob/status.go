package tfjob

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// statusEqual compares two statuses ignoring lastReconcileTime, which only
// changes when something else does.
func statusEqual(a, b kubeflowv1.JobStatus) bool {
	a.LastReconcileTime, b.LastReconcileTime = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

// metav1Time truncates to seconds, the precision the apiserver stores, so
// that a status read back compares equal to the one written.
func metav1Time(t time.Time) metav1.Time {
	return metav1.NewTime(t.Truncate(time.Second))
}
