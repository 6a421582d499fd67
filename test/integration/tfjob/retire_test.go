//go:build integration

package tfjob

import (
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestRetire: a finished job leaves the manager's cache with the pods and
// services it keeps, yet backfill_tfjobs still counts it; a job whose label
// is removed is retired again; deleting a retired job counts it deleted,
// and retiring does not.
func TestRetire(t *testing.T) {
	ns := newNamespace(t, "")
	before := scrape(t)
	job, pods := makeJob(ns, "done").replicas(kubeflowv1.ReplicaTypeChief, 1, kubeflowv1.RestartPolicyNever).
		replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyNever).
		run(cleanPolicy(kubeflowv1.CleanPodPolicyNone)).create(t, "done-chief-0", "done-worker-0")
	for _, pod := range pods {
		runPod(t, pod)
	}
	waitForCondition(t, ns, "done", kubeflowv1.JobRunning)
	if !hasJobSeries(scrape(t), ns, "done") {
		t.Fatalf("No %s series for a running job", metrics.NameJobInfo)
	}
	// The worker fails the job; cleanPodPolicy None keeps it, and keeps the
	// chief running, so the job stays until the chief ends too.
	endPod(t, pods["done-worker-0"], 1)
	failed := waitForCondition(t, ns, "done", kubeflowv1.JobFailed)
	if v, ok := failed.Labels[tfjob.RetiredLabel]; ok {
		t.Errorf("Retired (%q) while its chief runs", v)
	}
	endPod(t, pods["done-chief-0"], 0)
	waitForRetired(t, job, "Failed")

	for _, obj := range []client.Object{&corev1.Pod{}, &corev1.Service{}} {
		for _, name := range []string{"done-chief-0", "done-worker-0"} {
			if err := apiServer.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj); err != nil {
				t.Fatal(err)
			}
			if v, ok := obj.GetLabels()[tfjob.RetiredLabel]; !ok || v != "true" {
				t.Errorf("%T %s: %s = %q, want \"true\"", obj, name, tfjob.RetiredLabel, v)
			}
		}
	}
	phase := func(p string) map[string]string { return map[string]string{"namespace": ns, "phase": p} }
	jobLabels := map[string]string{"job_namespace": ns, "framework": "tensorflow"}
	got := waitForMetrics(t, "the retired job counted", before, []want{
		{metrics.NameJobs, phase("Failed"), 1},
		{metrics.NameJobsDeleted, jobLabels, 0},
	}, nil)
	// The per-job series read the cache, which no longer holds the job.
	if hasJobSeries(got, ns, "done") {
		t.Errorf("%s still has a series for the retired job", metrics.NameJobInfo)
	}

	// Removing the label brings the job back; it is retired again.
	unlabel := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+tfjob.RetiredLabel+`":null}}}`))
	if err := apiServer.Client.Patch(context.Background(), job, unlabel); err != nil {
		t.Fatal(err)
	}
	if _, ok := job.Labels[tfjob.RetiredLabel]; ok {
		t.Fatalf("The label is still on the job after removing it: %v", job.Labels)
	}
	waitForRetired(t, job, "Failed")

	if err := apiServer.Client.Delete(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	waitForMetrics(t, "the retired job's deletion", before, []want{
		{metrics.NameJobs, phase("Failed"), 0},
		{metrics.NameJobsDeleted, jobLabels, 1},
	}, nil)
}

// waitForRetired waits until the job carries the retired label of state.
func waitForRetired(t *testing.T, job *kubeflowv1.TFJob, state string) {
	t.Helper()
	framework.Eventually(t, job.Name+" retired", func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job.Namespace, job.Name)
		if err != nil {
			return false, err
		}
		return got.Labels[tfjob.RetiredLabel] == state, nil
	})
}

// hasJobSeries reports whether backfill_tfjob_info has a series for the job.
func hasJobSeries(families map[string]*dto.MetricFamily, ns, name string) bool {
	for _, m := range families[metrics.NameJobInfo].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["namespace"] == ns && labels["tfjob"] == name {
			return true
		}
	}
	return false
}
