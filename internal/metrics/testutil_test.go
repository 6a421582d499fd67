package metrics

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// testNow is the time of every pass in these tests.
var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return testNow.Add(-d) }

// gather resets every metric, runs f, and returns the series f left that
// are not zero: "name{label=value,...}" → value, with a histogram as its
// count and sum.
func gather(t *testing.T, f func()) map[string]float64 {
	t.Helper()
	for _, c := range collectors {
		if v, ok := c.(interface{ Reset() }); ok {
			v.Reset()
		}
	}
	f()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectors...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gathering: %v", err)
	}
	return series(families)
}

// series flattens metric families as gather describes.
func series(families []*dto.MetricFamily) map[string]float64 {
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName() + labelString(m.GetLabel())
			switch {
			case m.Counter != nil && m.Counter.GetValue() != 0:
				got[name] = m.Counter.GetValue()
			case m.Gauge != nil:
				got[name] = m.Gauge.GetValue()
			case m.Histogram != nil && m.Histogram.GetSampleCount() != 0:
				got[name+" count"] = float64(m.Histogram.GetSampleCount())
				got[name+" sum"] = m.Histogram.GetSampleSum()
			}
		}
	}
	return got
}

func labelString(labels []*dto.LabelPair) string {
	var parts []string
	for _, l := range labels {
		parts = append(parts, fmt.Sprintf("%s=%s", l.GetName(), l.GetValue()))
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// job is a TFJob of namespace ns created an hour before testNow, with
// the replicas given by type and the status st.
func job(ns string, replicas map[kubeflowv1.ReplicaType]int32, st kubeflowv1.JobStatus) *kubeflowv1.TFJob {
	j := &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", CreationTimestamp: metav1.NewTime(ago(time.Hour))},
		Spec:       kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
		Status:     st,
	}
	for rtype, n := range replicas {
		j.Spec.TFReplicaSpecs[rtype] = &kubeflowv1.ReplicaSpec{Replicas: &n}
	}
	return j
}

// status builds a job status: conditions "Type" (True) or "Type=False",
// in order.
func status(conditions ...string) kubeflowv1.JobStatus {
	var st kubeflowv1.JobStatus
	for _, c := range conditions {
		ctype, cstatus, _ := strings.Cut(c, "=")
		if cstatus == "" {
			cstatus = string(corev1.ConditionTrue)
		}
		st.Conditions = append(st.Conditions, kubeflowv1.JobCondition{Type: kubeflowv1.JobConditionType(ctype), Status: corev1.ConditionStatus(cstatus)})
	}
	return st
}

// with returns st with its replica statuses and counts changed by f.
func with(st kubeflowv1.JobStatus, f func(*kubeflowv1.JobStatus)) kubeflowv1.JobStatus {
	st = *st.DeepCopy()
	f(&st)
	return st
}

// active sets how many replicas of a type run and have succeeded.
func active(rtype kubeflowv1.ReplicaType, running, succeeded int32) func(*kubeflowv1.JobStatus) {
	return func(st *kubeflowv1.JobStatus) {
		if st.ReplicaStatuses == nil {
			st.ReplicaStatuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{}
		}
		st.ReplicaStatuses[rtype] = &kubeflowv1.ReplicaStatus{Active: running, Succeeded: succeeded}
	}
}

func times(start, completion time.Time) func(*kubeflowv1.JobStatus) {
	return func(st *kubeflowv1.JobStatus) {
		s, c := metav1.NewTime(start), metav1.NewTime(completion)
		st.StartTime, st.CompletionTime = &s, &c
	}
}
