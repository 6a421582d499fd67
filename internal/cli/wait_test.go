package cli

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/manager"
)

// failingGets fails the first failures Gets of a TFJob with err, then
// answers from the fake cluster.
func failingGets(failures int, err error) interceptor.Funcs {
	return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, isJob := obj.(*kubeflowv1.TFJob); isJob && failures > 0 {
			failures--
			return err
		}
		return c.Get(ctx, key, obj, opts...)
	}}
}

func TestWaitForJobsRetriesUntilTheTimeout(t *testing.T) {
	runningJob := makeJob("team", "mnist", time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
		condition(kubeflowv1.JobRunning, corev1.ConditionTrue, "Running", "", time.Minute).obj()
	transient := apierrors.NewServerTimeout(kubeflowv1.GroupVersion.WithResource("tfjobs").GroupResource(), "get", 1)
	deleted := apierrors.NewNotFound(kubeflowv1.GroupVersion.WithResource("tfjobs").GroupResource(), "mnist")
	for name, tc := range map[string]struct {
		funcs   interceptor.Funcs
		timeout time.Duration
		wantErr string // empty: the wait succeeds
	}{
		"one transient error is retried": {funcs: failingGets(1, transient), timeout: time.Minute},
		"a deleted job ends the wait at once": {funcs: failingGets(1, deleted), timeout: time.Hour,
			wantErr: "TFJob team/mnist was deleted while waiting for it"},
		"errors until the timeout name the last one": {funcs: failingGets(1<<30, transient), timeout: 10 * time.Millisecond,
			wantErr: "timed out after 10ms waiting for the TFJobs to be running: getting TFJob team/mnist: The get operation against tfjobs.kubeflow.org could not be completed at this time"},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(manager.Scheme()).WithObjects(runningJob.DeepCopy()).WithInterceptorFuncs(tc.funcs).Build()
			m := &unstructured.Unstructured{}
			m.SetGroupVersionKind(kubeflowv1.GroupVersion.WithKind("TFJob"))
			m.SetNamespace("team")
			m.SetName("mnist")
			err := waitForJobs(context.Background(), c, []manifest{{where: "FILE document 1", object: m}}, waitRunning, tc.timeout, io.Discard)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("waitForJobs: %v, want the job seen running", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("waitForJobs = %v, want an error starting %q", err, tc.wantErr)
			}
		})
	}
}
