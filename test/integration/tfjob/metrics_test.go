//go:build integration

package tfjob

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestMetrics drives one job to success, through an in-place restart, and
// another to failure, through a disruption and a restart, then reads the
// manager's /metrics. The series labelled with the test's namespace must
// be exact; the others are shared with the suite's other tests, so they
// must have grown by at least this test's share.
func TestMetrics(t *testing.T) {
	ns := newNamespace(t, "")
	began := time.Now()
	before := scrape(t)

	// ok: one worker runs, its container restarts twice in place, it
	// succeeds.
	_, okPods := makeJob(ns, "ok").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyOnFailure).create(t, "ok-worker-0")
	runPod(t, okPods["ok-worker-0"])
	waitForCondition(t, ns, "ok", kubeflowv1.JobRunning)
	apiServer.SetPodStatus(t, okPods["ok-worker-0"], func(s *corev1.PodStatus) { s.ContainerStatuses[0].RestartCount = 2 })
	endPod(t, okPods["ok-worker-0"], 0)
	waitForCondition(t, ns, "ok", kubeflowv1.JobSucceeded)

	// bad: two workers run; worker 1 is evicted and recreated; worker 0 is
	// killed by a signal and recreated; the new worker 0 exits 1.
	bad, badPods := makeJob(ns, "bad").replicas(kubeflowv1.ReplicaTypeWorker, 2, kubeflowv1.RestartPolicyExitCode).create(t, "bad-worker-0", "bad-worker-1")
	runPod(t, badPods["bad-worker-0"])
	runPod(t, badPods["bad-worker-1"])
	waitForJob(t, bad, "both workers active", func(st kubeflowv1.JobStatus) bool {
		return st.ReplicaStatuses[kubeflowv1.ReplicaTypeWorker].Active == 2
	})
	apiServer.SetPodStatus(t, badPods["bad-worker-1"], func(s *corev1.PodStatus) {
		s.Phase = corev1.PodFailed
		s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeflowv1.ContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 143, FinishedAt: metav1.Now()}}}}
	})
	runPod(t, waitForNewPod(t, ns, "bad-worker-1", string(badPods["bad-worker-1"].UID)))
	waitForJob(t, bad, "Running again after the eviction", func(st kubeflowv1.JobStatus) bool {
		c := st.Conditions
		return st.Disruptions == 1 && len(c) > 0 && c[len(c)-1].Type == kubeflowv1.JobRunning
	})
	endPod(t, badPods["bad-worker-0"], 137)
	endPod(t, waitForNewPod(t, ns, "bad-worker-0", string(badPods["bad-worker-0"].UID)), 1)
	waitForCondition(t, ns, "bad", kubeflowv1.JobFailed)

	job := map[string]string{"job_namespace": ns, "framework": "tensorflow"}
	phase := func(p string) map[string]string { return map[string]string{"namespace": ns, "phase": p} }
	exact := []want{
		{metrics.NameJobsCreated, job, 2},
		{metrics.NameJobsSuccessful, job, 1},
		{metrics.NameJobsFailed, job, 1},
		{metrics.NameJobsRestarted, job, 2},
		{metrics.NameTimeToRunning, map[string]string{"namespace": ns}, 2},
	}
	for _, p := range metrics.Phases {
		n := 0.0
		if p == "Succeeded" || p == "Failed" {
			n = 1
		}
		exact = append(exact, want{metrics.NameJobs, phase(p), n})
	}
	atLeast := []want{
		{metrics.NameDuration, map[string]string{"result": "succeeded"}, 1},
		{metrics.NameDuration, map[string]string{"result": "failed"}, 1},
		{metrics.NamePodsCreated, map[string]string{"replica_type": "worker"}, 5},
		{metrics.NamePodsDeleted, map[string]string{"replica_type": "worker"}, 2},
		{metrics.NameReplicaRestarts, map[string]string{"cause": "exit_code"}, 1},
		{metrics.NameReplicaRestarts, map[string]string{"cause": "in_place"}, 2},
		{metrics.NameDisruptions, map[string]string{"reason": "EvictionByEvictionAPI"}, 1},
	}
	after := waitForMetrics(t, "the jobs' metrics", before, exact, atLeast)

	// Each job took at least no time and at most this test's time to run.
	ttr := find(after, metrics.NameTimeToRunning, map[string]string{"namespace": ns})
	if sum := ttr.GetHistogram().GetSampleSum(); sum <= 0 || sum > 2*time.Since(began).Seconds()+2 {
		t.Errorf("%s sum = %v s for two jobs of a test that took %v", metrics.NameTimeToRunning, sum, time.Since(began))
	}

	// Deleting a job counts it and takes it off the gauge.
	if err := apiServer.Client.Delete(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	final := waitForMetrics(t, "the deletion", before, []want{
		{metrics.NameJobsDeleted, job, 1},
		{metrics.NameJobs, phase("Failed"), 0},
		{metrics.NameJobs, phase("Succeeded"), 1},
	}, nil)

	wantTypes := map[string]dto.MetricType{
		metrics.NameJobsCreated: dto.MetricType_COUNTER, metrics.NameJobsDeleted: dto.MetricType_COUNTER,
		metrics.NameJobsSuccessful: dto.MetricType_COUNTER, metrics.NameJobsFailed: dto.MetricType_COUNTER,
		metrics.NameJobsRestarted: dto.MetricType_COUNTER, metrics.NameJobs: dto.MetricType_GAUGE,
		metrics.NamePodsCreated: dto.MetricType_COUNTER, metrics.NamePodsDeleted: dto.MetricType_COUNTER,
		metrics.NameReplicaRestarts: dto.MetricType_COUNTER, metrics.NameDisruptions: dto.MetricType_COUNTER,
		metrics.NameTimeToRunning: dto.MetricType_HISTOGRAM, metrics.NameDuration: dto.MetricType_HISTOGRAM,
	}
	for name, typ := range wantTypes {
		if f := final[name]; f.GetType() != typ || len(f.GetMetric()) == 0 {
			t.Errorf("%s: type %v with %d series, want %v", name, f.GetType(), len(f.GetMetric()), typ)
		}
	}
}

// want is a series and its value: a counter's or gauge's value, or a
// histogram's sample count.
type want struct {
	name   string
	labels map[string]string
	value  float64
}

// String is the series as PromQL writes it.
func (w want) String() string {
	var labels []string
	for k, v := range w.labels {
		labels = append(labels, fmt.Sprintf("%s=%q", k, v))
	}
	slices.Sort(labels)
	return w.name + "{" + strings.Join(labels, ",") + "}"
}

// waitForMetrics scrapes /metrics until every exact series has its value
// and every atLeast series has grown from before by at least its value,
// and returns the last scrape.
func waitForMetrics(t *testing.T, what string, before map[string]*dto.MetricFamily, exact, atLeast []want) map[string]*dto.MetricFamily {
	t.Helper()
	var got map[string]*dto.MetricFamily
	var problems []string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, framework.Timeout, true, func(context.Context) (bool, error) {
		got, problems = scrape(t), nil
		for _, w := range exact {
			if v := value(got, w); v != w.value {
				problems = append(problems, fmt.Sprintf("%s = %v, want %v", w, v, w.value))
			}
		}
		for _, w := range atLeast {
			if grew := value(got, w) - value(before, w); grew < w.value {
				problems = append(problems, fmt.Sprintf("%s grew by %v, want at least %v", w, grew, w.value))
			}
		}
		return len(problems) == 0, nil
	})
	if err != nil {
		t.Fatalf("Waiting for %s on /metrics: %v:\n%s", what, err, strings.Join(problems, "\n"))
	}
	return got
}

// scrape reads and parses the manager's /metrics, waiting for the manager
// to serve it.
func scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	var families map[string]*dto.MetricFamily
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		families, last = get(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("Reading %s: %v: %v", metricsURL, err, last)
	}
	return families
}

func get(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// value is a series' value, 0 when absent.
func value(families map[string]*dto.MetricFamily, w want) float64 {
	m := find(families, w.name, w.labels)
	switch {
	case m == nil:
		return 0
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return 0
}

// find is the series of a family with exactly these labels, or nil.
func find(families map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) == len(labels) && !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
			return labels[l.GetName()] != l.GetValue()
		}) {
			return m
		}
	}
	return nil
}

// waitForJob waits until the job's status satisfies ok.
func waitForJob(t *testing.T, job *kubeflowv1.TFJob, what string, ok func(kubeflowv1.JobStatus) bool) {
	t.Helper()
	framework.Eventually(t, job.Name+": "+what, func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job.Namespace, job.Name)
		if err != nil {
			return false, err
		}
		return ok(got.Status), nil
	})
}
