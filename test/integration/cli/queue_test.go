//go:build integration

package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
	"github.com/backfill-dev/backfill/test/framework"
)

// workloadCRDName is Kueue's Workload CRD, as the apiserver names it.
const workloadCRDName = "workloads.kueue.x-k8s.io"

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// workloadCRDInstalled says whether the suite's apiserver serves Kueue's
// Workloads already.
func workloadCRDInstalled(t *testing.T) bool {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	err := apiServer.Client.Get(context.Background(), client.ObjectKey{Name: workloadCRDName}, crd)
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// installWorkloadCRD installs Kueue's Workload CRD; Kueue itself does
// not run: the tests write what it would.
func installWorkloadCRD(t *testing.T) {
	t.Helper()
	if err := apiServer.InstallWorkloadCRD(); err != nil {
		t.Fatalf("Installing Kueue's Workload CRD: %v", err)
	}
}

// createQueuedJob creates a TFJob of one worker submitted to the
// LocalQueue training, suspended as Kueue's webhook leaves it.
func createQueuedJob(t *testing.T, ns, name string) *kubeflowv1.TFJob {
	t.Helper()
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("24")}
	job := &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{queueing.QueueNameLabel: "training"}},
		Spec: kubeflowv1.TFJobSpec{
			RunPolicy: kubeflowv1.RunPolicy{Suspend: ptr.To(true)},
			TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
				kubeflowv1.ReplicaTypeWorker: {Replicas: ptr.To[int32](1), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "tensorflow", Image: "tensorflow/tensorflow:2.15.0", Resources: corev1.ResourceRequirements{Requests: requests},
				}}}}},
			},
		},
	}
	if err := apiServer.Client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	return job
}

// createWorkload creates the Workload Kueue would keep for job, owned by
// it, and writes status through the status subresource, as Kueue does.
func createWorkload(t *testing.T, job *kubeflowv1.TFJob, name string, status map[string]any) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	wl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{"namespace": job.Namespace, "name": name},
		"spec": map[string]any{
			"queueName": queueing.QueueName(job),
			"podSets": []any{map[string]any{
				"name": "worker", "count": int64(1),
				"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
					"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0",
					"resources": map[string]any{"requests": map[string]any{"cpu": "24"}},
				}}}},
			}},
		},
	}}
	wl.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind, Name: job.Name, UID: job.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
	if err := apiServer.Client.Create(ctx, wl); err != nil {
		t.Fatalf("creating Workload %s: %v", name, err)
	}
	setWorkloadStatus(t, wl, status)
	return wl
}

func setWorkloadStatus(t *testing.T, wl *unstructured.Unstructured, status map[string]any) {
	t.Helper()
	wl.Object["status"] = status
	if err := apiServer.Client.Status().Update(context.Background(), wl); err != nil {
		t.Fatalf("writing the status of Workload %s: %v", wl.GetName(), err)
	}
}

func workloadCondition(ctype, status, reason, message string) map[string]any {
	return map[string]any{
		"type": ctype, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z"),
	}
}

// spaces collapses the runs of blanks describe aligns its columns with.
var spaces = regexp.MustCompile(` +`)

// describeSays runs describe until it prints every one of wants (blanks
// collapsed), and fails with the last output if it never does.
func describeSays(t *testing.T, kubeconfigPath, ns, name string, wants ...string) {
	t.Helper()
	var r result
	var missing []string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, framework.Timeout, true, func(context.Context) (bool, error) {
		r = cliAs(t, kubeconfigPath, "", "describe", name, "-n", ns)
		out := spaces.ReplaceAllString(r.stdout, " ")
		missing = missing[:0]
		for _, want := range wants {
			if !strings.Contains(out, want) {
				missing = append(missing, want)
			}
		}
		return r.code == 0 && len(missing) == 0, nil
	})
	if err != nil {
		t.Fatalf("describe %s (exit %d) never said %q:\n%s%s", name, r.code, missing, r.stdout, r.stderr)
	}
}

// getState is the STATE column of job in `backfill get`.
func getState(t *testing.T, ns, name string) string {
	t.Helper()
	r := cli(t, "", "get", name, "-n", ns)
	r.wantSuccess(t)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || strings.Fields(lines[0])[1] != "STATE" {
		t.Fatalf("get printed:\n%s", r.stdout)
	}
	return strings.Fields(lines[1])[1]
}

// get and describe tell a queued job's story as Kueue writes it: before
// Kueue is installed, with Kueue's CRDs but no Workload, waiting for quota,
// then admitted.
func TestQueueInGetAndDescribe(t *testing.T) {
	ns := newNamespace(t)
	job := createQueuedJob(t, ns, "llama")

	if got := getState(t, ns, "llama"); got != "Queued" {
		t.Errorf("get shows the queued job as %s, want Queued", got)
	}
	if !workloadCRDInstalled(t) {
		describeSays(t, kubeconfig, ns, "llama",
			"State: Queued (suspended in LocalQueue training",
			"Local Queue: training",
			"Kueue is not installed",
			"the label kueue.x-k8s.io/queue-name does nothing",
			"suspended until you un-suspend it (kubectl patch tfjob llama -n "+ns)
	} else {
		t.Log("Kueue's Workload CRD was installed before this test: the state without Kueue is not checked")
	}

	installWorkloadCRD(t)
	describeSays(t, kubeconfig, ns, "llama",
		"Kueue is installed but has made no Workload for this job",
		`"kubeflow.org/tfjob" in integrations.frameworks`,
		"run backfill doctor")

	quota := "couldn't assign flavors to pod set worker: insufficient quota for cpu in flavor default-flavor, request > maximum capacity (24 > 8)"
	wl := createWorkload(t, job, "tfjob-llama-3f2a1", map[string]any{
		"conditions": []any{workloadCondition(queueing.ConditionQuotaReserved, "False", "Pending", quota)},
	})
	describeSays(t, kubeconfig, ns, "llama",
		"Queue:\n Local Queue: training\n Cluster Queue: <none>: not admitted\n Workload: tfjob-llama-3f2a1\n Admission: waiting since ",
		"Why: Pending: "+quota+" (QuotaReserved=False, ")
	if got := getState(t, ns, "llama"); got != "Queued" {
		t.Errorf("get shows the job waiting for quota as %s, want Queued", got)
	}

	// Kueue admits the job: it reserves quota in cluster-queue, then
	// unsuspends the job.
	setWorkloadStatus(t, wl, map[string]any{
		"admission": map[string]any{
			"clusterQueue": "cluster-queue",
			"podSetAssignments": []any{map[string]any{
				"name": "worker", "count": int64(1),
				"flavors":       map[string]any{"cpu": "default-flavor"},
				"resourceUsage": map[string]any{"cpu": "24"},
			}},
		},
		"conditions": []any{
			workloadCondition(queueing.ConditionQuotaReserved, "True", "QuotaReserved", "Quota reserved in ClusterQueue cluster-queue"),
			workloadCondition(queueing.ConditionAdmitted, "True", "Admitted", "The workload is admitted"),
		},
	})
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"runPolicy":{"suspend":false}}}`))
	if err := apiServer.Client.Patch(context.Background(), job, patch); err != nil {
		t.Fatal(err)
	}
	describeSays(t, kubeconfig, ns, "llama",
		"Cluster Queue: cluster-queue",
		"Admission: admitted ")
	if got := getState(t, ns, "llama"); got == "Queued" {
		t.Errorf("get shows the admitted job as Queued")
	}
}

// A user who may read TFJobs but not Workloads gets describe's report
// with a line saying so, not an error.
func TestDescribeWithoutRightsToWorkloads(t *testing.T) {
	installWorkloadCRD(t)
	ns := newNamespace(t)
	createQueuedJob(t, ns, "secret")
	ctx := context.Background()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tfjob-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{kubeflowv1.GroupVersion.Group}, Resources: []string{"tfjobs"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tfjob-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "tfjob-reader"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := apiServer.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	user, err := apiServer.Env.AddUser(envtest.User{Name: "tfjob-reader"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	config, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, "tfjob-reader.kubeconfig", string(config))

	describeSays(t, path, ns, "secret",
		"State: Queued",
		"Local Queue: training",
		"Workload: <unknown>: you may not list Kueue's Workloads (workloads.kueue.x-k8s.io) in namespace "+ns)
}
