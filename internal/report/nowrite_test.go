package report

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// TestReportsWriteOnlyTheStore: reports, accepted or refused, read the
// cluster through CachedObjects and never write to it; what they change
// is the progress in the store, and nothing else.
func TestReportsWriteOnlyTheStore(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kubeflowv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for _, p := range fixturePods() {
		objs = append(objs, p)
	}
	for _, j := range fixtureJobs() {
		objs = append(objs, j)
	}
	wrote := func(what string) error {
		t.Errorf("a report wrote to the cluster: %s", what)
		return nil
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return wrote("create")
		},
		Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
			return wrote("update")
		},
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return wrote("patch")
		},
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return wrote("apply")
		},
		Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error {
			return wrote("delete")
		},
		DeleteAllOf: func(context.Context, client.WithWatch, client.Object, ...client.DeleteAllOfOption) error {
			return wrote("delete all")
		},
		SubResourceCreate: func(context.Context, client.Client, string, client.Object, client.Object, ...client.SubResourceCreateOption) error {
			return wrote("subresource create")
		},
		SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			return wrote("subresource update")
		},
		SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return wrote("subresource patch")
		},
	}).Build()
	before := snapshot(t, c)

	th := newTestHandler(CachedObjects(c))
	wantStatus(t, th.post(goodPath, "good", `{"step": 5, "checkpoint": true}`), http.StatusNoContent, "")
	for _, token := range []string{"other", "recreated", "terminating", "bad", "gone", "unbound"} {
		if rec := th.post(goodPath, token, `{"step": 6}`); rec.Code < 400 {
			t.Errorf("token %s: %d, want a refusal", token, rec.Code)
		}
	}
	wantStatus(t, th.post("/v1/namespaces/ml/tfjobs/ghost/progress", "ghost", `{"step": 1}`), http.StatusNotFound, "")
	wantStatus(t, th.post(goodPath, "good", `{"step": 1}`), http.StatusBadRequest, "")

	if diff := cmp.Diff(before, snapshot(t, c)); diff != "" {
		t.Errorf("the cluster changed (-before +after):\n%s", diff)
	}
	if p, ok := th.store.Progress(jobUID); !ok || p.Step != 5 || th.store.records != 2 {
		t.Errorf("store: %+v (%v), %d records; want step 5 of the one accepted report, and one refused step back", p, ok, th.store.records)
	}
	for _, uid := range []string{"other-uid", "ghost-uid", "elsewhere-uid"} {
		if _, ok := th.store.Progress(k8stypes.UID(uid)); ok {
			t.Errorf("job %s has progress: a refused report reached the store", uid)
		}
	}
}

// snapshot is every pod and TFJob as the client holds them.
func snapshot(t *testing.T, c client.Client) []client.Object {
	t.Helper()
	var pods corev1.PodList
	var jobs kubeflowv1.TFJobList
	if err := c.List(context.Background(), &pods); err != nil {
		t.Fatal(err)
	}
	if err := c.List(context.Background(), &jobs); err != nil {
		t.Fatal(err)
	}
	var out []client.Object
	for i := range pods.Items {
		out = append(out, &pods.Items[i])
	}
	for i := range jobs.Items {
		out = append(out, &jobs.Items[i])
	}
	return out
}
