package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/manager"
)

func TestWaitForNamedJobs(t *testing.T) {
	succeeded := makeJob("team", "mnist", time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
		condition(kubeflowv1.JobSucceeded, corev1.ConditionTrue, "Succeeded", "", time.Minute).obj()
	failed := makeJob("team", "resnet", time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
		condition(kubeflowv1.JobFailed, corev1.ConditionTrue, "Failed", "worker-0 exited with code 1", time.Minute).obj()
	running := makeJob("team", "bert", time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
		condition(kubeflowv1.JobRunning, corev1.ConditionTrue, "Running", "", time.Minute).obj()
	tfjobs := schema.GroupResource{Group: kubeflowv1.GroupVersion.Group, Resource: "tfjobs"}
	// refusedAfter answers the first n Gets of a TFJob, then refuses the
	// rest as RBAC would once a binding is gone.
	refusedAfter := func(n int) interceptor.Funcs {
		return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, isJob := obj.(*kubeflowv1.TFJob); isJob {
				if n == 0 {
					return apierrors.NewForbidden(tfjobs, key.Name, nil)
				}
				n--
			}
			return c.Get(ctx, key, obj, opts...)
		}}
	}
	for name, tc := range map[string]struct {
		names   []string
		until   string
		funcs   interceptor.Funcs
		wantErr string // empty: the wait succeeds
		wantOut string
		exact   bool // the output is wantOut, not only holds it
	}{
		"a succeeded job is done": {names: []string{"mnist"}, until: waitDone, wantOut: "mnist: Succeeded"},
		"a running job runs":      {names: []string{"bert", "mnist"}, until: waitRunning, wantOut: "bert: Running"},
		"a name given twice is waited once": {names: []string{"mnist", "mnist"}, until: waitDone,
			wantOut: "mnist: Succeeded, 0/1 replicas running, 0 restarts, 0 disruptions\n", exact: true},
		"a failed job fails the wait": {names: []string{"mnist", "resnet"}, until: waitDone,
			wantErr: "TFJob resnet failed: worker-0 exited with code 1"},
		"no such job is said at once": {names: []string{"mnist", "gpt"}, until: waitDone,
			wantErr: `TFJob "gpt" not found in namespace team`},
		"a refusal ends the wait at once": {names: []string{"bert"}, until: waitDone, funcs: refusedAfter(1),
			wantErr: `tfjobs.kubeflow.org "bert" is forbidden`},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(manager.Scheme()).
				WithObjects(succeeded.DeepCopy(), failed.DeepCopy(), running.DeepCopy()).WithInterceptorFuncs(tc.funcs).Build()
			var out bytes.Buffer
			// An hour's timeout: a wait that does not end by itself fails
			// the test by its deadline, not by passing.
			err := waitForNamedJobs(context.Background(), c, "team", tc.names, tc.until, time.Hour, &out)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("wait: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("wait = %v, want an error saying %q", err, tc.wantErr)
			}
			if !strings.Contains(out.String(), tc.wantOut) || tc.exact && out.String() != tc.wantOut {
				t.Errorf("wait printed %q, want %q in it", out.String(), tc.wantOut)
			}
		})
	}
}

func TestWaitCommandRefusesBadCalls(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no job":         {args: nil, want: "wait takes the names of the TFJobs to wait for"},
		"only the kind":  {args: []string{"tfjobs"}, want: "wait takes the names of the TFJobs to wait for"},
		"another kind":   {args: []string{"pods/mnist"}, want: `"pods/mnist": wait takes TFJobs only`},
		"a bad --for":    {args: []string{"mnist", "--for=ready"}, want: `--for "ready": use --for=done or --for=running`},
		"a zero timeout": {args: []string{"mnist", "--timeout=0s"}, want: "--timeout 0s: give a positive duration"},
	} {
		t.Run(name, func(t *testing.T) {
			root := NewRootCommand()
			root.SetArgs(append([]string{"wait"}, tc.args...))
			root.SetOut(&bytes.Buffer{})
			root.SetErr(&bytes.Buffer{})
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !isUsageError(err) {
				t.Errorf("wait %v = %v, want a usage error saying %q", tc.args, err, tc.want)
			}
		})
	}
}
