//go:build integration

package report

import (
	"context"
	"net/http"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestDeletedPodToken: the token of a replica that was deleted (and
// recreated under its name by the operator) reports nothing: 403, while
// the new pod's token reports.
func TestDeletedPodToken(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	job, pods := runningJob(t, ns, "deleted", 1)
	old := podToken(t, pods[0], tfjob.ReportAudience)
	wantReport(t, ns, "deleted", bearer(old), `{"step": 10}`, http.StatusNoContent, "")

	if err := apiServer.Client.Delete(ctx, pods[0]); err != nil {
		t.Fatal(err)
	}
	// The operator recreates the pod once it saw the old one go: the
	// manager's cache no longer holds the old pod's UID.
	replacement := waitForNewPod(t, pods[0])
	wantReport(t, ns, "deleted", bearer(old), `{"step": 20}`, http.StatusForbidden, "")
	runPod(t, replacement)
	waitForJob(t, job, "the replacement running", func(st kubeflowv1.JobStatus) bool {
		return lastCondition(st).Type == kubeflowv1.JobRunning
	})
	// The new pod resumes from its checkpoint: its steps may go back.
	// Reports are kept to the second, and one in the same second as the
	// report the status holds does not replace it (progress.Merge): the
	// new pod reports in a later second.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	wantReport(t, ns, "deleted", bearer(podToken(t, replacement, tfjob.ReportAudience)), `{"step": 5}`, http.StatusNoContent, "")
	waitForJob(t, job, "the new pod's step", func(st kubeflowv1.JobStatus) bool { return st.Progress != nil && st.Progress.Step == 5 })
	// Once the apiserver's own cache of the review has run out, the
	// TokenReview itself refuses the old token, and it is still 403
	// (the manager may still trust its own review of it, and refuse it
	// for its pod's new UID: the reason differs, not the status).
	framework.Eventually(t, "the TokenReview to refuse the old token", func(ctx context.Context) (bool, error) {
		r, err := review(ctx, old)
		return err == nil && !r.Authenticated, err
	})
	wantReport(t, ns, "deleted", bearer(old), `{"step": 20}`, http.StatusForbidden, "")
	if p := waitForJob(t, job, "progress", func(kubeflowv1.JobStatus) bool { return true }).Status.Progress; p == nil || p.Step != 5 {
		t.Errorf("progress %+v, want step 5: the old pod's refused reports change nothing", p)
	}
}

// TestTokenReviewOfDeletedPod records what a TokenReview says of a token
// bound to a pod that no longer exists, and to one recreated under the
// same name: the manager tells these from bad tokens by that text alone.
func TestTokenReviewOfDeletedPod(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bare"},
		Spec:       corev1.PodSpec{ServiceAccountName: "default", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if err := apiServer.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// The manager remembers a refused token for a while: the spare, sent
	// only once the pod is recreated, shows what it says then.
	token, spare := podToken(t, pod, tfjob.ReportAudience), podToken(t, pod, tfjob.ReportAudience)
	r, err := review(ctx, token)
	if err != nil || !r.Authenticated || r.User.Extra["authentication.kubernetes.io/pod-name"][0] != "bare" ||
		r.User.Extra["authentication.kubernetes.io/pod-uid"][0] != string(pod.UID) {
		t.Fatalf("the review of a live pod's token: %+v, %v; want it authenticated with the pod's name and UID in its extra", r, err)
	}
	// An unscheduled pod with no finalizer goes at once.
	if err := apiServer.Client.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	framework.Eventually(t, "the TokenReview to refuse the deleted pod's token", func(ctx context.Context) (bool, error) {
		r, err = review(ctx, token)
		return err == nil && !r.Authenticated, err
	})
	t.Logf("TokenReview of a deleted pod's token, %v after the deletion: authenticated=%v error=%q", time.Since(deleted).Round(time.Second), r.Authenticated, r.Error)
	if r.Error != "[invalid bearer token, service account token has been invalidated]" {
		t.Errorf("the review says %q; the manager maps \"service account token has been invalidated\" to 403", r.Error)
	}
	// The token reports nothing: 403, whatever the job.
	wantReport(t, ns, "any", bearer(token), `{"step": 1}`, http.StatusForbidden, "service account token has been invalidated")

	// A pod of the same name again: the token names the old UID.
	pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bare"}, Spec: pod.Spec}
	if err := apiServer.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, "the TokenReview to see the new pod", func(ctx context.Context) (bool, error) {
		r, err = review(ctx, token)
		return err == nil && r.Error != "[invalid bearer token, service account token has been invalidated]", err
	})
	t.Logf("TokenReview of a recreated pod's token: authenticated=%v error=%q", r.Authenticated, r.Error)
	if r.Authenticated {
		t.Error("the token of a pod recreated under its name is authenticated")
	}
	wantReport(t, ns, "any", bearer(spare), `{"step": 1}`, http.StatusForbidden, "does not match service account pod ref claim")
}

// review asks the TokenReview API about token, for the report audience.
func review(ctx context.Context, token string) (authenticationv1.TokenReviewStatus, error) {
	r, err := clientset.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{tfjob.ReportAudience}},
	}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.TokenReviewStatus{}, err
	}
	return r.Status, nil
}
