//go:build integration

package report

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/progress"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestStepReportsCoalesced: a job whose two pods report their step twice a
// second each writes its status about once per progress.StepInterval, as
// the apiserver's watch of the job counts the writes, and its latest step
// reaches the status; a checkpoint reported right after a write is
// written at once, not held back with the steps.
func TestStepReportsCoalesced(t *testing.T) {
	ns := newNamespace(t)
	job, pods := runningJob(t, ns, "chatty", 2)
	tokens := []string{podToken(t, pods[0], tfjob.ReportAudience), podToken(t, pods[1], tfjob.ReportAudience)}
	wantReport(t, ns, "chatty", bearer(tokens[0]), `{"step": 1}`, http.StatusNoContent, "")
	waitForJob(t, job, "the first report, at once", func(st kubeflowv1.JobStatus) bool { return st.Progress != nil && st.Progress.Step == 1 })

	writes := watchWrites(t, job)
	const reports = 24 // 12 per pod, 6 s at the most the endpoint takes from a pod
	start := time.Now()
	step := 1
	tick := time.NewTicker(250 * time.Millisecond)
	for range reports {
		<-tick.C
		step++
		wantReport(t, ns, "chatty", bearer(tokens[step%2]), fmt.Sprintf(`{"step": %d}`, step), http.StatusNoContent, "")
	}
	tick.Stop()
	last := waitForJob(t, job, "the last step", func(st kubeflowv1.JobStatus) bool { return st.Progress.Step == int64(step) })
	elapsed := time.Since(start)
	n := len(writes.until(t, last.ResourceVersion))
	// Writes of steps alone are StepInterval apart, less the second the
	// status's time is cut to.
	bound := int(elapsed/(progress.StepInterval-time.Second)) + 1
	t.Logf("%d step reports in %v: %d status writes (bound %d)", reports, elapsed.Round(time.Millisecond), n, bound)
	if n > bound {
		t.Errorf("%d step reports made %d status writes in %v, want at most %d (one per %v)", reports, n, elapsed.Round(time.Millisecond), bound, progress.StepInterval)
	}

	// Right after a write: a step is held back, a checkpoint is not.
	wantReport(t, ns, "chatty", bearer(tokens[0]), fmt.Sprintf(`{"step": %d}`, step+1), http.StatusNoContent, "")
	wantReport(t, ns, "chatty", bearer(tokens[0]), fmt.Sprintf(`{"step": %d, "checkpoint": true}`, step+2), http.StatusNoContent, "")
	checkpointed := waitForJob(t, job, "the checkpoint", func(st kubeflowv1.JobStatus) bool {
		return st.Progress.CheckpointStep != nil && *st.Progress.CheckpointStep == int64(step+2)
	})
	if after := writes.until(t, checkpointed.ResourceVersion); len(after) != n+1 {
		t.Errorf("%d status writes between the last step and the checkpoint, want none: the held step rides with the checkpoint", len(after)-n-1)
	}
	// Both times are the manager's, cut to the second: a checkpoint held
	// back with the steps would be written StepInterval after the last
	// write.
	if gap := checkpointed.Status.LastReconcileTime.Sub(last.Status.LastReconcileTime.Time); gap >= progress.StepInterval {
		t.Errorf("the checkpoint was written %v after the last step, want at once (steps wait %v)", gap, progress.StepInterval)
	}
}

// TestDeletedJobProgressDropped: the manager forgets the progress of a
// job once it is gone from its cache, as backfill_report_jobs shows.
func TestDeletedJobProgressDropped(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	job, pods := runningJob(t, ns, "dropped", 1)
	wantReport(t, ns, "dropped", bearer(podToken(t, pods[0], tfjob.ReportAudience)), `{"step": 1}`, http.StatusNoContent, "")
	waitForJob(t, job, "the report", func(st kubeflowv1.JobStatus) bool { return st.Progress != nil })
	held := reportJobs(t)
	if held < 1 {
		t.Fatalf("%s is %v with a job that reported, want at least 1", metrics.NameReportJobs, held)
	}
	// No garbage collector runs here: the job goes at once, its pods stay.
	if err := apiServer.Client.Delete(ctx, job); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, metrics.NameReportJobs+" to fall by the deleted job", func(context.Context) (bool, error) {
		return reportJobs(t) == held-1, nil
	})
}

// reportJobs is the manager's backfill_report_jobs.
func reportJobs(t *testing.T) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == metrics.NameReportJobs {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("The manager exports no %s", metrics.NameReportJobs)
	return 0
}

// jobWrites are the versions of a job its watch saw written, in order.
type jobWrites struct {
	mu       sync.Mutex
	versions []string
}

// until is the writes up to and including version, once the watch has
// seen it.
func (w *jobWrites) until(t *testing.T, version string) []string {
	t.Helper()
	var seen []string
	framework.Eventually(t, "the watch to see version "+version, func(context.Context) (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		for i, v := range w.versions {
			if v == version {
				seen = append([]string(nil), w.versions[:i+1]...)
				return true, nil
			}
		}
		return false, nil
	})
	return seen
}

// watchWrites records every write of the job from now on, as the
// apiserver's watch reports them, until the test ends.
func watchWrites(t *testing.T, job *kubeflowv1.TFJob) *jobWrites {
	t.Helper()
	wc, err := client.NewWithWatch(apiServer.Env.Config, client.Options{Scheme: framework.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	current, err := getJob(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, &kubeflowv1.TFJobList{}, client.InNamespace(job.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", job.Name)},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: current.ResourceVersion}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	writes := &jobWrites{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified {
				continue
			}
			writes.mu.Lock()
			writes.versions = append(writes.versions, ev.Object.(*kubeflowv1.TFJob).ResourceVersion)
			writes.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
	return writes
}
