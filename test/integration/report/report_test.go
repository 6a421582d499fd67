//go:build integration

package report

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestReports: a pod's report reaches its job's status.progress; every
// refusal has its status and changes nothing in any job's status.
func TestReports(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	mnist, mnistPods := runningJob(t, ns, "mnist", 1)
	other, otherPods := runningJob(t, ns, "other", 1)
	token := podToken(t, mnistPods[0], tfjob.ReportAudience)

	wantReport(t, ns, "mnist", bearer(token), `{"step": 100, "epoch": 1}`, http.StatusNoContent, "")
	mnist = waitForJob(t, mnist, "the reported progress", func(st kubeflowv1.JobStatus) bool {
		p := st.Progress
		return p != nil && p.Step == 100 && p.Epoch != nil && *p.Epoch == 1 && p.CheckpointTime == nil
	})

	// Every refusal carries step 7777 and a checkpoint: none may show.
	const refused = `{"step": 7777, "checkpoint": true}`
	wantReport(t, ns, "mnist", "", refused, http.StatusUnauthorized, "no token")
	wantReport(t, ns, "mnist", "Basic "+token, refused, http.StatusUnauthorized, "malformed Authorization")
	wantReport(t, ns, "mnist", "Bearer", refused, http.StatusUnauthorized, "malformed Authorization")
	wantReport(t, ns, "mnist", bearer("not-a-token"), refused, http.StatusUnauthorized, "not valid for backfill.dev")
	wantReport(t, ns, "mnist", bearer(podToken(t, mnistPods[0], "another-audience")), refused, http.StatusUnauthorized, "not valid for backfill.dev")
	wantReport(t, ns, "mnist", bearer(expiredToken(t, token)), refused, http.StatusUnauthorized, "expired")
	wantReport(t, ns, "mnist", bearer(token[:len(token)-4]+"AAAA"), refused, http.StatusUnauthorized, "not valid for backfill.dev")
	wantReport(t, ns, "mnist", bearer(podToken(t, otherPods[0], tfjob.ReportAudience)), refused, http.StatusForbidden, "not a replica of TFJob "+ns+"/mnist")
	wantReport(t, ns, "mnist", bearer(requestToken(t, ns, tfjob.ReportAudience, nil)), refused, http.StatusForbidden, "bound to no pod")
	// A pod learns nothing of jobs but its own: another name is 403,
	// whether a job of that name exists or not.
	wantReport(t, ns, "no-such-job", bearer(token), refused, http.StatusForbidden, "not a replica")
	wantReport(t, ns, "mnist", bearer(token), `{"step": 1`+strings.Repeat(" ", 1024)+`}`, http.StatusRequestEntityTooLarge, "larger than 1024")
	wantReport(t, ns, "mnist", bearer(token), `step=7777`, http.StatusBadRequest, "is not")
	wantReport(t, ns, "mnist", bearer(token), `{"step": 7777, "loss": 0.5}`, http.StatusBadRequest, `unknown field "loss"`)
	wantReport(t, ns, "mnist", bearer(token), `{"step": -1}`, http.StatusBadRequest, "cannot be negative")
	wantReport(t, ns, "mnist", bearer(token), `{"step": 99, "checkpoint": true}`, http.StatusBadRequest, "is before step 100")

	framework.Consistently(t, "a refused report reached a status", quiet, func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, mnist)
		if err != nil {
			return false, err
		}
		o, err := getJob(ctx, other)
		return !cmp.Equal(got.Status.Progress, mnist.Status.Progress) || o.Status.Progress != nil, err
	})

	// Last, as it spends the pod's burst: past it, reports are 429 and
	// change nothing either.
	limited := 0
	for i := 0; i < 30 && limited == 0; i++ {
		status, _ := post(t, ns, "mnist", bearer(token), `{"step": 200}`)
		if status == http.StatusTooManyRequests {
			limited = i
		} else if status != http.StatusNoContent {
			t.Fatalf("report %d: %d, want 204 until the limit, then 429", i, status)
		}
	}
	if limited < 10 {
		t.Fatalf("the %dth report was limited, want a burst of 10 first", limited)
	}
	wantReport(t, ns, "mnist", bearer(token), refused, http.StatusTooManyRequests, "more than 2 times a second")
	waitForJob(t, mnist, "step 200", func(st kubeflowv1.JobStatus) bool { return st.Progress != nil && st.Progress.Step == 200 })
	framework.Consistently(t, "a rate-limited report reached the status", quiet, func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, mnist)
		return err == nil && (got.Status.Progress.Step != 200 || got.Status.Progress.CheckpointTime != nil), err
	})
	_ = ctx
}

// TestJobNotFound: a pod whose job is gone (no garbage collector runs
// here, so its pods stay) reports to a job that does not exist: 404.
func TestJobNotFound(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	job, pods := runningJob(t, ns, "gone", 1)
	token := podToken(t, pods[0], tfjob.ReportAudience)
	if err := apiServer.Client.Delete(ctx, job); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, "the job to be gone", func(ctx context.Context) (bool, error) {
		_, err := getJob(ctx, job)
		return err != nil, client.IgnoreNotFound(err)
	})
	// The manager's cache learns of the deletion shortly after.
	framework.Eventually(t, "the report to be 404", func(context.Context) (bool, error) {
		status, _ := post(t, ns, "gone", bearer(token), `{"step": 1}`)
		return status == http.StatusNotFound, nil
	})
	wantReport(t, ns, "gone", bearer(token), `{"step": 1}`, http.StatusNotFound, "TFJob "+ns+"/gone does not exist")
	var pod corev1.Pod
	if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pods[0]), &pod); err != nil {
		t.Fatalf("the pod of the deleted job: %v (it must outlive its job here)", err)
	}
}
