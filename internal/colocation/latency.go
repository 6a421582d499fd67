package colocation

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An online workload opts in to latency protection with annotations on its
// pod template (a Deployment's or StatefulSet's
// spec.template.metadata.annotations), so that every pod carries them
// whatever controls it.
const (
	// LatencyObjectiveAnnotation is the workload's P99 objective, a
	// duration such as "200ms": the opt-in.
	LatencyObjectiveAnnotation = "backfill.dev/latency-objective"
	// LatencyMetricAnnotation names the histogram of its request
	// durations, in seconds, as Prometheus stores it (without _bucket).
	LatencyMetricAnnotation = "backfill.dev/latency-metric"
	// LatencyHistogramAnnotation says how the histogram is stored:
	// HistogramAuto (default), HistogramClassic or HistogramNative.
	LatencyHistogramAnnotation = "backfill.dev/latency-histogram"
)

// The kinds of histogram of LatencyHistogramAnnotation.
const (
	// HistogramAuto reads a native histogram where there is one, else the
	// classic _bucket series.
	HistogramAuto    = "auto"
	HistogramClassic = "classic"
	HistogramNative  = "native"
)

// DefaultLatencyMetrics are the histograms read when a workload names
// none: OpenTelemetry's http.server.request.duration and the name most
// Prometheus client libraries use, as Prometheus stores them.
var DefaultLatencyMetrics = []string{"http_server_request_duration_seconds", "http_request_duration_seconds"}

// LatencyObjective is what an opted-in workload declares.
type LatencyObjective struct {
	// Metrics are the histogram names to read, any of which may hold the
	// workload's requests.
	Metrics   []string
	Histogram string
	P99       time.Duration
}

// metricName is a Prometheus metric name.
var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// LatencyObjectiveOf reads a pod's opt-in: nil without
// LatencyObjectiveAnnotation, an error naming the annotation and its fix
// when a value is wrong.
func LatencyObjectiveOf(annotations map[string]string) (*LatencyObjective, error) {
	v, ok := annotations[LatencyObjectiveAnnotation]
	if !ok {
		return nil, nil
	}
	p99, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || p99 <= 0 {
		return nil, fmt.Errorf("annotation %s=%q: must be a positive duration such as 200ms", LatencyObjectiveAnnotation, v)
	}
	o := &LatencyObjective{Metrics: DefaultLatencyMetrics, Histogram: HistogramAuto, P99: p99}
	if m, ok := annotations[LatencyMetricAnnotation]; ok {
		m = strings.TrimSuffix(strings.TrimSpace(m), "_bucket")
		if !metricName.MatchString(m) {
			return nil, fmt.Errorf("annotation %s=%q: must be a Prometheus metric name such as %s", LatencyMetricAnnotation, annotations[LatencyMetricAnnotation], DefaultLatencyMetrics[0])
		}
		o.Metrics = []string{m}
	}
	if h, ok := annotations[LatencyHistogramAnnotation]; ok {
		switch h {
		case HistogramAuto, HistogramClassic, HistogramNative:
			o.Histogram = h
		default:
			return nil, fmt.Errorf("annotation %s=%q: must be %s, %s or %s", LatencyHistogramAnnotation, h, HistogramAuto, HistogramClassic, HistogramNative)
		}
	}
	return o, nil
}

// WorkloadOf names the workload a pod belongs to: its controller, a
// ReplicaSet of a Deployment named by the Deployment (the ReplicaSet's
// name less its pod-template-hash), else the pod itself.
func WorkloadOf(pod *corev1.Pod) string {
	owner := metav1.GetControllerOf(pod)
	if owner == nil {
		return pod.Name
	}
	if hash := pod.Labels["pod-template-hash"]; owner.Kind == "ReplicaSet" && hash != "" {
		return strings.TrimSuffix(owner.Name, "-"+hash)
	}
	return owner.Name
}
