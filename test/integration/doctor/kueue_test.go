//go:build integration

package doctor

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// Kueue as doctor sees it, with no Kueue running: its Workload CRD from its
// module (bin/kueue-manifests), its configuration in the ConfigMap of its
// standard install, and the Workloads written as Kueue writes them.
//
// A job labelled for a queue is a WARN while Kueue is not installed.
// Installed with its TFJob integration off, Kueue makes no Workload for
// the job: once the job is older than doctor's grace of 30 s, doctor says
// the integration is off and names the frameworks the configuration
// lists. Meanwhile, in another namespace, a job Kueue keeps suspended
// because its LocalQueue does not exist is a FAIL with the Workload's
// reason, and one waiting for quota a WARN. A Workload for the first job,
// as Kueue makes it once its integration is on, is an OK.
func TestDoctorKueue(t *testing.T) {
	off := newNamespace(t, "kueue-off")
	unqueued := makeJob(off, "mnist", 1, quantities("cpu", "1"))
	unqueued.Labels = map[string]string{queueing.QueueNameLabel: "training"}
	create(t, unqueued)

	r := doctorAny(t, "-n", off)
	noKueue := r.mustFindOf(t, "kueue-integration", "WARN", "",
		"1 TFJob(s) carry the kueue.x-k8s.io/queue-name label (kueue-off/mnist in queue training) but Kueue is not installed",
		"the label does nothing")
	wantFix(t, noKueue, "install Kueue with its TFJob integration on", "kubectl -n kueue-off label tfjob mnist kueue.x-k8s.io/queue-name-")
	r.mustFindOf(t, "kueue-waiting", "OK", "", "no TFJob waits in a Kueue queue")

	installWorkloadCRD(t)
	writeKueueConfig(t, []string{"batch/job", "jobset.x-k8s.io/jobset", "pod"})

	t.Run("waiting", testKueueWaiting)

	r = doctorUntil(t, "kueue-integration", "WARN", 90*time.Second, "-n", off)
	integration := r.mustFindOf(t, "kueue-integration", "WARN", "",
		"Kueue keeps no Workload for 1 TFJob(s) with a kueue.x-k8s.io/queue-name label (kueue-off/mnist in queue training; the oldest created",
		"the integration is off, so Kueue neither suspends nor admits these jobs: they run outside the queue's quota",
		"(ConfigMap kueue-system/kueue-manager-config lists integrations.frameworks batch/job, jobset.x-k8s.io/jobset, pod, not kubeflow.org/tfjob)")
	wantFix(t, integration, `add "kubeflow.org/tfjob" to integrations.frameworks in Kueue's configuration`,
		"kubectl -n kueue-system rollout restart deployment kueue-controller-manager", "docs/queueing.md")

	// The integration on: Kueue makes the job's Workload.
	createWorkload(t, off, "mnist", "training", nil)
	r = doctorAny(t, "-n", off)
	r.mustFindOf(t, "kueue-integration", "OK", "", "Kueue keeps a Workload for each of the 1 TFJob(s)")
}

// testKueueWaiting: a suspended job whose Workload says why it waits.
func testKueueWaiting(t *testing.T) {
	ns := newNamespace(t, "kueue-wait")
	job := makeJob(ns, "resnet", 1, quantities("cpu", "1"))
	job.Labels = map[string]string{queueing.QueueNameLabel: "training"}
	job.Spec.RunPolicy.Suspend = ptr.To(true) // as Kueue's webhook suspends it
	create(t, job)
	workload := createWorkload(t, ns, "resnet", "training", &metav1.Condition{
		Type: queueing.ConditionQuotaReserved, Status: metav1.ConditionFalse, Reason: "Inadmissible",
		Message: "LocalQueue training doesn't exist", LastTransitionTime: metav1.NewTime(time.Now().Add(-15 * time.Minute)),
	})

	r := doctorAny(t, "-n", ns)
	noQueue := r.mustFindOf(t, "kueue-waiting", "FAIL", "tfjob kueue-wait/resnet",
		"suspended by Kueue for 15m (over 10 minutes), waiting in LocalQueue training: Workload "+workload.GetName()+
			" says QuotaReserved=False, reason Inadmissible: LocalQueue training doesn't exist")
	wantFix(t, noQueue, "create LocalQueue training in namespace kueue-wait", "kubectl -n kueue-wait label tfjob resnet kueue.x-k8s.io/queue-name=<queue> --overwrite")
	r.mustFindOf(t, "kueue-integration", "OK", "", "Kueue keeps a Workload for each of the 1 TFJob(s)")

	setWorkloadCondition(t, workload, metav1.Condition{
		Type: queueing.ConditionQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending",
		Message:            "couldn't assign flavors to pod set worker: insufficient unused quota for cpu in flavor default-flavor, 1 more needed",
		LastTransitionTime: metav1.NewTime(time.Now().Add(-40 * time.Minute)),
	})
	r = doctorAny(t, "-n", ns)
	quota := r.mustFindOf(t, "kueue-waiting", "WARN", "tfjob kueue-wait/resnet", "suspended by Kueue for 40m", "insufficient unused quota for cpu")
	wantFix(t, quota, "the queue's quota is held by other jobs", "raise the nominalQuota of the ClusterQueue behind LocalQueue kueue-wait/training")

	// A short wait is no finding.
	setWorkloadCondition(t, workload, metav1.Condition{
		Type: queueing.ConditionQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending",
		Message:            "couldn't assign flavors to pod set worker: insufficient unused quota for cpu in flavor default-flavor, 1 more needed",
		LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute)),
	})
	r = doctorAny(t, "-n", ns)
	r.mustFindOf(t, "kueue-waiting", "OK", "", "1 TFJob(s) wait in Kueue queues that can admit them, none for over 10 minutes (the longest: kueue-wait/resnet")
}

// installWorkloadCRD installs Kueue's Workload CRD; Kueue itself does
// not run: the tests write what it would.
func installWorkloadCRD(t *testing.T) {
	t.Helper()
	if err := apiServer.InstallWorkloadCRD(); err != nil {
		t.Fatalf("Installing Kueue's Workload CRD: %v", err)
	}
}

// writeKueueConfig writes Kueue's configuration as its standard install
// keeps it, listing frameworks.
func writeKueueConfig(t *testing.T, frameworks []string) {
	t.Helper()
	ns := newNamespace(t, queueing.ConfigNamespace)
	config := "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nintegrations:\n  frameworks:\n"
	for _, f := range frameworks {
		config += "  - \"" + f + "\"\n"
	}
	config += "  # - \"kubeflow.org/tfjob\"\n"
	create(t, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: queueing.ConfigMapName},
		Data:       map[string]string{queueing.ConfigKey: config},
	})
}

// createWorkload writes the Workload Kueue keeps for a job, owned by it,
// with condition in its status when given.
func createWorkload(t *testing.T, ns, job, queue string, condition *metav1.Condition) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	var owner kubeflowv1.TFJob
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: job}, &owner); err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{"namespace": ns, "name": "tfjob-" + job + "-" + string(owner.UID)[:5]},
		"spec": map[string]any{
			"queueName": queue,
			"podSets": []any{map[string]any{
				"name": "worker", "count": int64(1),
				"template": map[string]any{"spec": map[string]any{
					"restartPolicy": "OnFailure",
					"containers": []any{map[string]any{
						"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0-gpu",
						"resources": map[string]any{"requests": map[string]any{"cpu": "1"}},
					}},
				}},
			}},
		},
	}}
	w.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind, Name: job, UID: owner.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
	create(t, w)
	if condition != nil {
		setWorkloadCondition(t, w, *condition)
	}
	return w
}

// setWorkloadCondition writes the Workload's one condition, as Kueue does
// through the status subresource.
func setWorkloadCondition(t *testing.T, w *unstructured.Unstructured, c metav1.Condition) {
	t.Helper()
	ctx := context.Background()
	if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatal(err)
	}
	condition := map[string]any{
		"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message,
		"lastTransitionTime": c.LastTransitionTime.UTC().Format(time.RFC3339),
	}
	if err := unstructured.SetNestedSlice(w.Object, []any{condition}, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Client.Status().Update(ctx, w); err != nil {
		t.Fatalf("writing the status of Workload %s: %v", w.GetName(), err)
	}
}
