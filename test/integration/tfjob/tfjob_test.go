//go:build integration

package tfjob

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// The seed's manifests apply unchanged and get their pods and services,
// named, labelled, owned and configured as Kubeflow v1 does.
func TestExamplesCreateReplicas(t *testing.T) {
	cases := map[string]struct {
		file         string
		wantReplicas []string
		wantTFConfig bool
	}{
		"single worker": {
			file:         "tfjob-mnist-single.yaml",
			wantReplicas: []string{"tfjob-mnist-single-worker-0"},
		},
		"ps and workers": {
			file: "tfjob-distributed.yaml",
			wantReplicas: []string{
				"tfjob-distributed-ps-0", "tfjob-distributed-ps-1",
				"tfjob-distributed-worker-0", "tfjob-distributed-worker-1", "tfjob-distributed-worker-2", "tfjob-distributed-worker-3",
			},
			wantTFConfig: true,
		},
	}
	newNamespace(t, "ml-dev") // the namespace the manifests name
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			job := loadExample(t, tc.file)
			if err := apiServer.Client.Create(ctx, job); err != nil {
				t.Fatalf("Applying %s unchanged: %v", tc.file, err)
			}
			pods := waitForPods(t, job.Namespace, tc.wantReplicas...)

			var listed corev1.PodList
			if err := apiServer.Client.List(ctx, &listed, client.InNamespace(job.Namespace), client.MatchingLabels{"job-name": job.Name}); err != nil {
				t.Fatal(err)
			}
			if len(listed.Items) != len(tc.wantReplicas) {
				t.Errorf("kubectl get pods -l job-name=%s finds %d pods, want %d", job.Name, len(listed.Items), len(tc.wantReplicas))
			}
			for _, name := range tc.wantReplicas {
				pod := pods[name]
				checkOwned(t, pod, job)
				if pod.Labels[kubeflowv1.OperatorNameLabel] != "tfjob-controller" || pod.Labels[kubeflowv1.JobNameLabel] != job.Name {
					t.Errorf("Pod %s labels = %v, want the training.kubeflow.org labels", name, pod.Labels)
				}
				if pod.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
					t.Errorf("Pod %s restartPolicy = %s, want OnFailure from the replica spec", name, pod.Spec.RestartPolicy)
				}
				c := pod.Spec.Containers[0]
				if len(c.Ports) == 0 || c.Ports[len(c.Ports)-1].Name != "tfjob-port" || c.Ports[len(c.Ports)-1].ContainerPort != 2222 {
					t.Errorf("Pod %s ports = %v, want tfjob-port 2222", name, c.Ports)
				}
				checkTFConfig(t, pod, tc.wantTFConfig)

				svc := &corev1.Service{}
				if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: name}, svc); err != nil {
					t.Fatalf("Service %s: %v", name, err)
				}
				checkOwned(t, svc, job)
				if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector[kubeflowv1.ReplicaIndexLabel] != pod.Labels[kubeflowv1.ReplicaIndexLabel] {
					t.Errorf("Service %s = clusterIP %q selector %v, want headless selecting its pod", name, svc.Spec.ClusterIP, svc.Spec.Selector)
				}
			}
			got := waitForCondition(t, job.Namespace, job.Name, kubeflowv1.JobCreated)
			if got.Status.StartTime == nil || got.Status.ReplicaStatuses[kubeflowv1.ReplicaTypeWorker].Selector == "" {
				t.Errorf("Status = %+v, want startTime and a worker selector", got.Status)
			}
		})
	}
}

func checkOwned(t *testing.T, obj client.Object, job *kubeflowv1.TFJob) {
	t.Helper()
	refs := obj.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != job.UID || !ptr.Deref(refs[0].Controller, false) {
		t.Errorf("%s owners = %v, want controlled by TFJob %s", obj.GetName(), refs, job.Name)
	}
}

func checkTFConfig(t *testing.T, pod *corev1.Pod, want bool) {
	t.Helper()
	var raw string
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name == "TF_CONFIG" {
			raw = e.Value
		}
	}
	if (raw != "") != want {
		t.Fatalf("Pod %s TF_CONFIG = %q, want present=%v", pod.Name, raw, want)
	}
	if !want {
		return
	}
	var cfg struct {
		Cluster map[string][]string `json:"cluster"`
		Task    struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		} `json:"task"`
	}
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatalf("Pod %s TF_CONFIG: %v", pod.Name, err)
	}
	if cfg.Task.Type != pod.Labels[kubeflowv1.ReplicaTypeLabel] {
		t.Errorf("Pod %s TF_CONFIG task = %+v", pod.Name, cfg.Task)
	}
	wantPS := []string{"tfjob-distributed-ps-0." + pod.Namespace + ".svc:2222", "tfjob-distributed-ps-1." + pod.Namespace + ".svc:2222"}
	if diff := cmp.Diff(wantPS, cfg.Cluster["ps"]); diff != "" {
		t.Errorf("Pod %s TF_CONFIG ps (-want +got):\n%s", pod.Name, diff)
	}
}

// A distributed job succeeds when worker 0 does; its parameter servers,
// which never exit, are stopped under the default cleanPodPolicy (Running).
func TestSuccessStopsParameterServers(t *testing.T) {
	ctx := context.Background()
	job := loadExample(t, "tfjob-distributed.yaml")
	job.Namespace = newNamespace(t, "")
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := waitForPods(t, job.Namespace, "tfjob-distributed-ps-0", "tfjob-distributed-ps-1",
		"tfjob-distributed-worker-0", "tfjob-distributed-worker-1", "tfjob-distributed-worker-2", "tfjob-distributed-worker-3")
	for _, pod := range pods {
		runPod(t, pod)
	}
	waitForCondition(t, job.Namespace, job.Name, kubeflowv1.JobRunning)
	framework.Eventually(t, "4 active workers and 2 active PS", func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job.Namespace, job.Name)
		if err != nil {
			return false, err
		}
		rs := got.Status.ReplicaStatuses
		return rs[kubeflowv1.ReplicaTypeWorker].Active == 4 && rs[kubeflowv1.ReplicaTypePS].Active == 2, nil
	})

	endPod(t, pods["tfjob-distributed-worker-0"], 0)
	done := waitForCondition(t, job.Namespace, job.Name, kubeflowv1.JobSucceeded)
	if done.Status.CompletionTime == nil {
		t.Error("Succeeded job has no completionTime")
	}
	if c := done.Status.Conditions; len(c) < 3 || c[len(c)-2].Type != kubeflowv1.JobRunning || c[len(c)-2].Status != corev1.ConditionFalse {
		t.Errorf("Conditions = %+v, want Running turned False before Succeeded", c)
	}
	if diff := cmp.Diff([]int32{0}, done.Status.ReplicaStatuses[kubeflowv1.ReplicaTypeWorker].SucceededIndexes); diff != "" {
		t.Errorf("Worker succeededIndexes (-want +got):\n%s", diff)
	}
	noticed := &corev1.Pod{}
	framework.Eventually(t, "the stop notice on ps-0", func(ctx context.Context) (bool, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pods["tfjob-distributed-ps-0"]), noticed)
		return err == nil && noticed.Annotations["backfill.dev/stop-reason"] == "TFJobSucceeded", client.IgnoreNotFound(err)
	})
	if noticed.DeletionTimestamp != nil {
		t.Errorf("ps-0 was being deleted when its notice appeared; want the notice %v first", stopNotice)
	}
	for _, name := range []string{"tfjob-distributed-ps-0", "tfjob-distributed-ps-1", "tfjob-distributed-worker-1"} {
		waitGone(t, pods[name])
	}
	worker0 := &corev1.Pod{}
	if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pods["tfjob-distributed-worker-0"]), worker0); err != nil {
		t.Errorf("Succeeded worker-0 should be kept under cleanPodPolicy Running: %v", err)
	} else if len(worker0.Finalizers) != 0 {
		t.Errorf("Succeeded worker-0 finalizers = %v, want none once the job finished", worker0.Finalizers)
	}
}

// Under restartPolicy Never a failed replica fails the job.
func TestFailureUnderNeverFailsJob(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "")
	job := loadExample(t, "tfjob-mnist-single.yaml")
	job.Namespace = ns
	job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].RestartPolicy = kubeflowv1.RestartPolicyNever
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pod := waitForPods(t, ns, "tfjob-mnist-single-worker-0")["tfjob-mnist-single-worker-0"]
	endPod(t, pod, 1)
	failed := waitForCondition(t, ns, job.Name, kubeflowv1.JobFailed)
	last := failed.Status.Conditions[len(failed.Status.Conditions)-1]
	if last.Reason != "TFJobFailed" || failed.Status.CompletionTime == nil {
		t.Errorf("Failed condition = %+v, completionTime %v; want reason TFJobFailed and a completionTime", last, failed.Status.CompletionTime)
	}
	if failed.Status.ReplicaStatuses[kubeflowv1.ReplicaTypeWorker].Failed != 1 {
		t.Errorf("Worker failed = %d, want 1", failed.Status.ReplicaStatuses[kubeflowv1.ReplicaTypeWorker].Failed)
	}
}

// Under ExitCode, 128-255 (a signal) recreates the pod and counts a
// restart; 1-127 fails the job.
func TestExitCodeRetriesSignalsOnly(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "")
	job := loadExample(t, "tfjob-mnist-single.yaml")
	job.Namespace = ns
	job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].RestartPolicy = kubeflowv1.RestartPolicyExitCode
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	const name = "tfjob-mnist-single-worker-0"
	first := waitForPods(t, ns, name)[name]
	if first.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("Pod restartPolicy under ExitCode = %s, want Never (the operator decides)", first.Spec.RestartPolicy)
	}
	endPod(t, first, 137)
	second := waitForNewPod(t, ns, name, string(first.UID))
	restarting := waitForCondition(t, ns, job.Name, kubeflowv1.JobRestarting)
	if restarting.Status.Restarts != 1 {
		t.Errorf("status.restarts = %d, want 1", restarting.Status.Restarts)
	}

	endPod(t, second, 1)
	failed := waitForCondition(t, ns, job.Name, kubeflowv1.JobFailed)
	if failed.Status.Restarts != 1 {
		t.Errorf("status.restarts after the permanent failure = %d, want still 1", failed.Status.Restarts)
	}
}

// Deleting a TFJob deletes its pods and services through the garbage
// collector; the operator lets go of the pods' tracking finalizers.
func TestDeletingJobCollectsChildren(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "")
	job := loadExample(t, "tfjob-distributed.yaml")
	job.Namespace = ns
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := waitForPods(t, ns, "tfjob-distributed-ps-0", "tfjob-distributed-worker-3")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tfjob-distributed-worker-3"}}
	waitGoneAfter := []client.Object{pods["tfjob-distributed-ps-0"], pods["tfjob-distributed-worker-3"], svc}
	if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatalf("Service before deletion: %v", err)
	}

	if err := apiServer.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	for _, obj := range waitGoneAfter {
		waitGone(t, obj)
	}
}

// The pod template's metadata reaches the pods: Kubeflow manifests often
// annotate it (sidecar injection, scrape hints) and label it.
func TestTemplateMetadataReachesPods(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "")
	job := loadExample(t, "tfjob-mnist-single.yaml")
	job.Namespace = ns
	tmpl := &job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template
	tmpl.Labels = map[string]string{"team": "vision"}
	tmpl.Annotations = map[string]string{"sidecar.istio.io/inject": "false"}
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	stored, err := getJob(ctx, ns, job.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Annotations; got["sidecar.istio.io/inject"] != "false" {
		t.Fatalf("The apiserver dropped the template's annotations: stored %v", got)
	}
	pod := waitForPods(t, ns, "tfjob-mnist-single-worker-0")["tfjob-mnist-single-worker-0"]
	if pod.Labels["team"] != "vision" || pod.Annotations["sidecar.istio.io/inject"] != "false" {
		t.Errorf("Pod labels %v, annotations %v; want the template's team=vision and sidecar.istio.io/inject=false", pod.Labels, pod.Annotations)
	}
}

// A pod the apiserver refuses (here a ResourceQuota with no room) is
// reported as a Warning event on the job, saying why; once the quota
// allows it, the pod is created.
func TestRefusedPodIsReported(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "")
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
	}
	if err := apiServer.Client.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	// No quota controller runs here: write the status it would.
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}
	if err := apiServer.Client.Status().Update(ctx, quota); err != nil {
		t.Fatal(err)
	}

	job, _ := makeJob(ns, "refused").replicas(kubeflowv1.ReplicaTypeWorker, 1, kubeflowv1.RestartPolicyNever).create(t)
	framework.Eventually(t, "a FailedCreatePod event naming the quota", func(ctx context.Context) (bool, error) {
		var events eventsv1.EventList
		if err := apiServer.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == job.Name && e.Type == corev1.EventTypeWarning && e.Reason == "FailedCreatePod" {
				return strings.Contains(e.Note, "exceeded quota: no-pods"), nil
			}
		}
		return false, nil
	})

	if err := apiServer.Client.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	waitForPods(t, ns, "refused-worker-0")
}
