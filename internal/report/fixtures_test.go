package report

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	testclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/internal/progress"
)

// The fixtures: in namespace ml, job mnist with its pod mnist-worker-0,
// and job other with its pod other-worker-0; each token names one pod.
const (
	ns     = "ml"
	jobUID = types.UID("mnist-uid")
	podUID = types.UID("mnist-worker-0-uid")
)

// goodPath is where the operator tells mnist's pods to report: the route
// must serve it.
var goodPath = tfjob.ReportPath(ns, "mnist")

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// newTFJob is a job of two workers.
func newTFJob(namespace, name string, uid types.UID) *kubeflowv1.TFJob {
	return &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid, ResourceVersion: "1"},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {Replicas: ptr.To[int32](2)},
		}},
	}
}

// replica is a pod controlled by the TFJob job of UID owner, named and
// labelled as the operator makes worker <index> of it, name's last digit.
func replica(namespace, name string, uid types.UID, job string, owner types.UID) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: namespace, Name: name, UID: uid, ResourceVersion: "1",
		Labels: map[string]string{
			kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName,
			kubeflowv1.JobNameLabel:      job,
			kubeflowv1.ReplicaTypeLabel:  "worker",
			kubeflowv1.ReplicaIndexLabel: name[len(name)-1:],
		},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind, Name: job, UID: owner,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}}
}

func fixtureJobs() []*kubeflowv1.TFJob {
	deleting := newTFJob(ns, "deleting", "deleting-uid")
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	deleting.Finalizers = []string{"test"}
	return []*kubeflowv1.TFJob{newTFJob(ns, "mnist", jobUID), newTFJob(ns, "other", "other-uid"), newTFJob(ns, "reborn", "reborn-uid-2"), deleting,
		newTFJob("elsewhere", "mnist", "elsewhere-uid")}
}

func fixturePods() []*corev1.Pod {
	terminating := replica(ns, "mnist-worker-1", "terminating-uid", "mnist", jobUID)
	terminating.DeletionTimestamp = &metav1.Time{Time: t0}
	terminating.Finalizers = []string{"test"}
	bare := replica(ns, "bare", "bare-uid", "", "")
	bare.OwnerReferences = nil
	return []*corev1.Pod{
		replica(ns, "mnist-worker-0", podUID, "mnist", jobUID),
		replica(ns, "other-worker-0", "other-uid-0", "other", "other-uid"),
		replica(ns, "ghost-worker-0", "ghost-uid-0", "ghost", "ghost-uid"),
		replica(ns, "reborn-worker-0", "reborn-uid-0", "reborn", "reborn-uid-1"),
		replica(ns, "deleting-worker-0", "deleting-uid-0", "deleting", "deleting-uid"),
		replica("elsewhere", "mnist-worker-0", "elsewhere-uid-0", "mnist", "elsewhere-uid"),
		terminating, bare,
	}
}

// tokens are what the fake authenticator knows.
var tokens = map[string]struct {
	id  Identity
	err error
}{
	"good":        {id: podIdentity(ns, "mnist-worker-0", podUID)},
	"other":       {id: podIdentity(ns, "other-worker-0", "other-uid-0")},
	"ghost":       {id: podIdentity(ns, "ghost-worker-0", "ghost-uid-0")},
	"reborn":      {id: podIdentity(ns, "reborn-worker-0", "reborn-uid-0")},
	"deleting":    {id: podIdentity(ns, "deleting-worker-0", "deleting-uid-0")},
	"elsewhere":   {id: podIdentity("elsewhere", "mnist-worker-0", "elsewhere-uid-0")},
	"terminating": {id: podIdentity(ns, "mnist-worker-1", "terminating-uid")},
	"recreated":   {id: podIdentity(ns, "mnist-worker-0", "an-earlier-uid")},
	"vanished":    {id: podIdentity(ns, "mnist-worker-7", "vanished-uid")},
	"bare":        {id: podIdentity(ns, "bare", "bare-uid")},
	"unbound":     {id: Identity{Namespace: ns, ServiceAccount: "default"}},
	"bad":         {err: errors.Join(ErrUnauthenticated, errors.New("token has expired"))},
	"gone":        {err: errors.Join(ErrPodGone, errors.New("service account token has been invalidated"))},
	"broken":      {err: errors.New("the apiserver is down")},
}

func podIdentity(namespace, pod string, uid types.UID) Identity {
	return Identity{Namespace: namespace, ServiceAccount: "default", PodName: pod, PodUID: uid}
}

// fakeAuthn authenticates the tokens above and counts its calls.
type fakeAuthn struct{ calls int }

func (f *fakeAuthn) Authenticate(_ context.Context, token string) (Identity, error) {
	f.calls++
	t, ok := tokens[token]
	if !ok {
		return Identity{}, ErrUnauthenticated
	}
	return t.id, t.err
}

// fakeObjects reads the fixtures.
type fakeObjects struct {
	pods map[types.NamespacedName]*corev1.Pod
	jobs map[types.NamespacedName]*kubeflowv1.TFJob
}

func newFakeObjects() *fakeObjects {
	f := &fakeObjects{pods: map[types.NamespacedName]*corev1.Pod{}, jobs: map[types.NamespacedName]*kubeflowv1.TFJob{}}
	for _, p := range fixturePods() {
		f.pods[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
	}
	for _, j := range fixtureJobs() {
		f.jobs[types.NamespacedName{Namespace: j.Namespace, Name: j.Name}] = j
	}
	return f
}

func (f *fakeObjects) Pod(_ context.Context, key types.NamespacedName) (*corev1.Pod, error) {
	if p, ok := f.pods[key]; ok {
		return p.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, key.Name)
}

func (f *fakeObjects) TFJob(_ context.Context, key types.NamespacedName) (*kubeflowv1.TFJob, error) {
	if j, ok := f.jobs[key]; ok {
		return j.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "kubeflow.org", Resource: "tfjobs"}, key.Name)
}

// recorder is a progress.Store that counts what it was asked to record.
type recorder struct {
	*progress.Store
	records int
}

func (r *recorder) Record(job types.NamespacedName, jobUID, podUID types.UID, rep progress.Report, at time.Time) error {
	r.records++
	return r.Store.Record(job, jobUID, podUID, rep, at)
}

// testHandler is a handler over the fakes, at t0 on a fake clock.
type testHandler struct {
	*Handler
	authn *fakeAuthn
	store *recorder
	clock *testclock.FakePassiveClock
}

func newTestHandler(objects Objects) *testHandler {
	th := &testHandler{authn: &fakeAuthn{}, store: &recorder{Store: progress.NewStore()}, clock: testclock.NewFakePassiveClock(t0)}
	th.Handler = NewHandler(th.authn, objects, th.store, th.clock, logr.Discard())
	return th
}

// post sends a report; token "" sends no Authorization header.
func (th *testHandler) post(path, token, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	th.ServeHTTP(rec, req)
	return rec
}

// wantStatus checks a response's status and that its body says why.
func wantStatus(t *testing.T, rec *httptest.ResponseRecorder, status int, reason string) {
	t.Helper()
	if rec.Code != status || !strings.Contains(rec.Body.String(), reason) {
		t.Errorf("got %d %q, want %d with %q", rec.Code, rec.Body.String(), status, reason)
	}
	if status != http.StatusNoContent && !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Errorf("a refusal of Content-Type %q, want text/plain", rec.Header().Get("Content-Type"))
	}
}
