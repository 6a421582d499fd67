package colocation

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLatencyObjectiveOf(t *testing.T) {
	cases := map[string]struct {
		annotations map[string]string
		want        *LatencyObjective
		wantErr     string
	}{
		"not opted in": {annotations: map[string]string{LatencyMetricAnnotation: "rpc_seconds"}},
		"the objective alone reads the common names, either histogram": {
			annotations: map[string]string{LatencyObjectiveAnnotation: "200ms"},
			want:        &LatencyObjective{Metrics: DefaultLatencyMetrics, Histogram: HistogramAuto, P99: 200 * time.Millisecond},
		},
		"a named classic histogram, _bucket or not": {
			annotations: map[string]string{LatencyObjectiveAnnotation: " 1.5s", LatencyMetricAnnotation: "rpc_server_duration_seconds_bucket", LatencyHistogramAnnotation: HistogramClassic},
			want:        &LatencyObjective{Metrics: []string{"rpc_server_duration_seconds"}, Histogram: HistogramClassic, P99: 1500 * time.Millisecond},
		},
		"an objective without a unit": {
			annotations: map[string]string{LatencyObjectiveAnnotation: "200"},
			wantErr:     `annotation backfill.dev/latency-objective="200": must be a positive duration such as 200ms`,
		},
		"a zero objective": {
			annotations: map[string]string{LatencyObjectiveAnnotation: "0s"},
			wantErr:     "must be a positive duration",
		},
		"a metric name with a selector": {
			annotations: map[string]string{LatencyObjectiveAnnotation: "200ms", LatencyMetricAnnotation: `rpc{job="a"}`},
			wantErr:     "must be a Prometheus metric name",
		},
		"an unknown histogram kind": {
			annotations: map[string]string{LatencyObjectiveAnnotation: "200ms", LatencyHistogramAnnotation: "exponential"},
			wantErr:     "must be auto, classic or native",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := LatencyObjectiveOf(tc.annotations)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("objective (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkloadOf(t *testing.T) {
	owned := func(kind, name string, labels map[string]string) *corev1.Pod {
		yes := true
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-0", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{Kind: kind, Name: name, Controller: &yes}}}}
	}
	for _, tc := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{owned("ReplicaSet", "web-6d4cf56db6", map[string]string{"pod-template-hash": "6d4cf56db6"}), "web"},
		{owned("ReplicaSet", "plain", nil), "plain"},
		{owned("StatefulSet", "db", nil), "db"},
		{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lonely"}}, "lonely"},
	} {
		if got := WorkloadOf(tc.pod); got != tc.want {
			t.Errorf("WorkloadOf(%v) = %q, want %q", tc.pod.OwnerReferences, got, tc.want)
		}
	}
}
