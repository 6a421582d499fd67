//go:build integration

package report

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/test/framework"
)

var namespaceSeq atomic.Int64

// newNamespace creates a namespace, with its default ServiceAccount, for
// one test. No namespace controller runs: it stays until the suite ends.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("report-%d", namespaceSeq.Add(1))
	if err := apiServer.CreateNamespace(context.Background(), name); err != nil {
		t.Fatalf("Creating namespace %s: %v", name, err)
	}
	return name
}

// createJob creates a TFJob of n workers that restart on failure, and
// returns it once its pods exist. The pods run as the namespace's default
// ServiceAccount: envtest's apiserver runs no ServiceAccount admission to
// set it, and a token is bound only to a pod of its own ServiceAccount.
func createJob(t *testing.T, ns, name string, workers int32) (*kubeflowv1.TFJob, []*corev1.Pod) {
	t.Helper()
	job := &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {
				Replicas:      ptr.To(workers),
				RestartPolicy: kubeflowv1.RestartPolicyOnFailure,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					ServiceAccountName: "default",
					Containers:         []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "tensorflow/tensorflow:2.13.0"}},
				}},
			},
		}},
	}
	if err := apiServer.Client.Create(context.Background(), job); err != nil {
		t.Fatalf("Creating TFJob %s: %v", name, err)
	}
	pods := make([]*corev1.Pod, workers)
	for i := range pods {
		pods[i] = waitForPod(t, ns, fmt.Sprintf("%s-worker-%d", name, i))
	}
	return job, pods
}

// runningJob creates a job of n workers, runs its pods and waits until the
// manager's cache shows them running: until then it would not know them.
func runningJob(t *testing.T, ns, name string, workers int32) (*kubeflowv1.TFJob, []*corev1.Pod) {
	t.Helper()
	job, pods := createJob(t, ns, name, workers)
	for _, pod := range pods {
		runPod(t, pod)
	}
	waitForJob(t, job, fmt.Sprintf("%d workers running", workers), func(st kubeflowv1.JobStatus) bool {
		rs := st.ReplicaStatuses[kubeflowv1.ReplicaTypeWorker]
		return rs != nil && rs.Active == workers && lastCondition(st).Type == kubeflowv1.JobRunning
	})
	return job, pods
}

// podToken is a token the TokenRequest API binds to pod, for audience and
// the shortest life it allows, as the kubelet projects it.
func podToken(t *testing.T, pod *corev1.Pod, audience string) string {
	t.Helper()
	return requestToken(t, pod.Namespace, audience, &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID})
}

// requestToken is a token of the namespace's default ServiceAccount, bound
// to bound if not nil; for the apiserver's own audience if audience is
// empty.
func requestToken(t *testing.T, ns, audience string, bound *authenticationv1.BoundObjectReference) string {
	t.Helper()
	var audiences []string
	if audience != "" {
		audiences = []string{audience}
	}
	tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: ptr.To[int64](600), BoundObjectRef: bound},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Requesting a token for audience %s: %v", audience, err)
	}
	return tr.Status.Token
}

// post sends body to the job's report URL with an Authorization header
// (none if empty), and returns the status and the reason.
func post(t *testing.T, ns, job, authorization, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, reportURL+tfjob.ReportPath(ns, job), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := reports.Do(req)
	if err != nil {
		t.Fatalf("Posting a report: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	reason, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(reason))
}

// wantReport posts a report and checks the status, and that the reason
// says why.
func wantReport(t *testing.T, ns, job, authorization, body string, status int, reason string) {
	t.Helper()
	got, why := post(t, ns, job, authorization, body)
	if got != status || !strings.Contains(why, reason) {
		t.Errorf("POST %s to %s/%s: %d %q, want %d with %q", body, ns, job, got, why, status, reason)
	}
}

func bearer(token string) string { return "Bearer " + token }

// quiet is how long a test watches for something that must not happen.
const quiet = 3 * time.Second

// getJob reads a job from the apiserver.
func getJob(ctx context.Context, job *kubeflowv1.TFJob) (*kubeflowv1.TFJob, error) {
	got := &kubeflowv1.TFJob{}
	return got, apiServer.Client.Get(ctx, client.ObjectKeyFromObject(job), got)
}

// waitForJob waits until the job's status satisfies cond, and returns it.
func waitForJob(t *testing.T, job *kubeflowv1.TFJob, what string, cond func(kubeflowv1.JobStatus) bool) *kubeflowv1.TFJob {
	t.Helper()
	var got *kubeflowv1.TFJob
	framework.Eventually(t, "TFJob "+job.Name+": "+what, func(ctx context.Context) (bool, error) {
		var err error
		got, err = getJob(ctx, job)
		return err == nil && cond(got.Status), err
	})
	return got
}

// lastCondition is the job's state.
func lastCondition(st kubeflowv1.JobStatus) kubeflowv1.JobCondition {
	if len(st.Conditions) == 0 {
		return kubeflowv1.JobCondition{}
	}
	return st.Conditions[len(st.Conditions)-1]
}

// waitForPod waits until the pod exists and returns it.
func waitForPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	framework.Eventually(t, "pod "+name+" to exist", func(ctx context.Context) (bool, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)
		return err == nil, client.IgnoreNotFound(err)
	})
	return pod
}

// waitForNewPod waits until the pod of name has a UID other than old's.
func waitForNewPod(t *testing.T, old *corev1.Pod) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	framework.Eventually(t, "pod "+old.Name+" to be recreated", func(ctx context.Context) (bool, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(old), pod)
		return err == nil && pod.UID != old.UID, client.IgnoreNotFound(err)
	})
	return pod
}

// stopped reports whether the pod is being deleted or gone.
func stopped(ctx context.Context, pod *corev1.Pod) (bool, error) {
	got := &corev1.Pod{}
	err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pod), got)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return err == nil && (got.UID != pod.UID || got.DeletionTimestamp != nil), err
}

// runPod marks a pod Running, as a kubelet would.
func runPod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	apiServer.SetPodStatus(t, pod, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.ContainerStatuses = []corev1.ContainerStatus{{
			Name: kubeflowv1.ContainerName, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
		}}
	})
}
