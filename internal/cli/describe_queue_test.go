package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// A job waiting in a Kueue queue shows Queued, whatever the operator's
// conditions say, until it is done; a job suspended outside any queue
// stays Suspended.
func TestStateOfAQueuedJob(t *testing.T) {
	worker := func(name string) *jobBuilder {
		return makeJob("ns", name, time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
			condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "", time.Hour)
	}
	suspended := func(b *jobBuilder) *jobBuilder {
		return b.condition(kubeflowv1.JobSuspended, corev1.ConditionTrue, "TFJobSuspended", "", time.Minute)
	}
	userSuspended := suspended(worker("paused")).obj()
	userSuspended.Spec.RunPolicy.Suspend = ptr.To(true)
	for name, tc := range map[string]struct {
		job  *kubeflowv1.TFJob
		want string
	}{
		"queued":                  {job: suspended(worker("queued")).queue("training", true).obj(), want: "Queued"},
		"queued, not seen yet":    {job: makeJob("ns", "new", time.Second).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).queue("training", true).obj(), want: "Queued"},
		"admitted and running":    {job: worker("admitted").queue("training", false).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, "TFJobRunning", "", time.Minute).obj(), want: "Running"},
		"suspended, no queue":     {job: userSuspended, want: "Suspended"},
		"succeeded, still marked": {job: worker("done").queue("training", true).condition(kubeflowv1.JobSucceeded, corev1.ConditionTrue, "TFJobSucceeded", "", time.Minute).obj(), want: "Succeeded"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := stateOf(tc.job); got != tc.want {
				t.Errorf("stateOf = %q, want %q", got, tc.want)
			}
		})
	}
	queued := suspended(worker("queued")).queue("training", true).obj()
	if got := jobStateInWords(queued); !strings.HasPrefix(got, "Queued (suspended in LocalQueue training: ") {
		t.Errorf("describe's state of a queued job = %q, want Queued (suspended in LocalQueue training: …)", got)
	}
}

// readQueue reads the Workload of a job that names a queue, and a refusal
// to list Workloads is something to show, not a failure of describe.
func TestReadQueue(t *testing.T) {
	job := makeJob("research", "llama", time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).queue("training", true).obj()
	workload := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{"namespace": "research", "name": "tfjob-llama-8e2f1"},
		"status":   map[string]any{"admission": map[string]any{"clusterQueue": "cluster-queue"}},
	}}
	workload.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind, Name: job.Name, UID: job.UID}})
	withWorkload := fake.NewClientBuilder().WithObjects(workload).Build()
	refusing := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "workloads"}, "", errors.New("RBAC: access denied"))
		},
	})
	ctx := context.Background()

	got := readQueue(ctx, withWorkload, job)
	if got == nil || got.err != nil || got.workload == nil || got.workload.Name != "tfjob-llama-8e2f1" || got.workload.ClusterQueue != "cluster-queue" {
		t.Errorf("readQueue = %+v, want the Workload tfjob-llama-8e2f1 of cluster-queue", got)
	}
	got = readQueue(ctx, refusing, job)
	if got == nil || got.workload != nil || !apierrors.IsForbidden(got.err) {
		t.Errorf("readQueue when listing is forbidden = %+v, want the refusal", got)
	}
	unqueued := makeJob("research", "plain", time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).obj()
	if got := readQueue(ctx, refusing, unqueued); got != nil {
		t.Errorf("readQueue of a job that names no queue = %+v, want nil", got)
	}
}
