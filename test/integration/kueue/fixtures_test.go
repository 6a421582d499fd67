//go:build integration

package kueue

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/devcluster/kueue"
	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/queueing"
	"github.com/backfill-dev/backfill/test/framework"
)

// flavor is the suite's one ResourceFlavor: the training nodes.
const flavor = "training-pool"

func createFlavor(ctx context.Context) error {
	rf := kueue.Object("ResourceFlavor", "", flavor, map[string]any{
		"nodeLabels":  map[string]any{poolLabel: poolValue},
		"tolerations": []any{map[string]any{"key": poolTaint, "operator": "Exists", "effect": "NoSchedule"}},
	})
	if err := apiServer.Client.Create(ctx, rf); err != nil {
		return fmt.Errorf("creating ResourceFlavor %s: %w", flavor, err)
	}
	return nil
}

var queueSeq atomic.Int64

// queue is one test's namespace, ClusterQueue and LocalQueue.
type queue struct {
	namespace, clusterQueue, localQueue string
}

// newQueue makes a namespace with a LocalQueue and its own ClusterQueue of
// cpus CPUs on the suite's flavor, where a lower-priority job may be
// preempted for a higher one. The namespace goes when the test ends.
func newQueue(t *testing.T, cpus int) queue {
	t.Helper()
	ctx := context.Background()
	n := queueSeq.Add(1)
	q := queue{namespace: fmt.Sprintf("kueue-%d", n), clusterQueue: fmt.Sprintf("cq-%d", n), localQueue: "training"}
	if err := apiServer.CreateNamespace(ctx, q.namespace); err != nil {
		t.Fatalf("Creating namespace %s: %v", q.namespace, err)
	}
	cq := kueue.Object("ClusterQueue", "", q.clusterQueue, map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": q.namespace}},
		"preemption":        map[string]any{"withinClusterQueue": "LowerPriority"},
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu", "memory"},
			"flavors": []any{map[string]any{
				"name": flavor,
				"resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": fmt.Sprint(cpus)},
					map[string]any{"name": "memory", "nominalQuota": fmt.Sprintf("%dGi", 4*cpus)},
				},
			}},
		}},
	})
	lq := kueue.Object("LocalQueue", q.namespace, q.localQueue, map[string]any{"clusterQueue": q.clusterQueue})
	for _, obj := range []client.Object{cq, lq} {
		if err := apiServer.Client.Create(ctx, obj); err != nil {
			t.Fatalf("Creating %s %s: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = apiServer.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: q.namespace}})
		_ = apiServer.Client.Delete(ctx, cq)
	})
	return q
}

// jobBuilder makes the suite's TFJobs: workers of one CPU and 1 GiB each,
// whose simulated training ends after a while.
type jobBuilder struct{ job *kubeflowv1.TFJob }

func newJob(q queue, name string, workers int32, runFor string) *jobBuilder {
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{simkwok.SimDurationAnnotation: runFor}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  kubeflowv1.ContainerName,
			Image: "registry.invalid/backfill/trainer:never-pulled",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
			}},
		}}},
	}
	return &jobBuilder{job: &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: q.namespace, Labels: map[string]string{queueing.QueueNameLabel: q.localQueue}},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {Replicas: ptr.To(workers), RestartPolicy: kubeflowv1.RestartPolicyNever, Template: template},
		}},
	}}
}

func (b *jobBuilder) priority(class string) *jobBuilder {
	b.job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: class}
	return b
}

func (b *jobBuilder) queueName(name string) *jobBuilder {
	b.job.Labels[queueing.QueueNameLabel] = name
	return b
}

func (b *jobBuilder) exitCode(code string) *jobBuilder {
	b.job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Annotations[simkwok.SimExitCodeAnnotation] = code
	return b
}

func (b *jobBuilder) create(t *testing.T) *kubeflowv1.TFJob {
	t.Helper()
	if err := apiServer.Client.Create(context.Background(), b.job); err != nil {
		t.Fatalf("Creating TFJob %s: %v", b.job.Name, err)
	}
	return b.job
}

// getJob reads the job again.
func getJob(ctx context.Context, job *kubeflowv1.TFJob) (*kubeflowv1.TFJob, error) {
	fresh := &kubeflowv1.TFJob{}
	return fresh, apiServer.Client.Get(ctx, client.ObjectKeyFromObject(job), fresh)
}

// jobPods are the job's pods, by the Kubeflow job-name label.
func jobPods(ctx context.Context, job *kubeflowv1.TFJob) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := apiServer.Client.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{kubeflowv1.JobNameLabel: job.Name})
	return pods.Items, err
}

// waitJob waits until cond holds for the job, returning it as last read.
func waitJob(t *testing.T, job *kubeflowv1.TFJob, what string, cond func(*kubeflowv1.TFJob) bool) *kubeflowv1.TFJob {
	t.Helper()
	var last *kubeflowv1.TFJob
	framework.Eventually(t, "TFJob "+job.Name+" "+what, func(ctx context.Context) (bool, error) {
		var err error
		last, err = getJob(ctx, job)
		return err == nil && cond(last), err
	})
	return last
}

// waitWorkload waits until the job's Workload exists and cond holds.
func waitWorkload(t *testing.T, job *kubeflowv1.TFJob, what string, cond func(*queueing.Workload) bool) *queueing.Workload {
	t.Helper()
	var last *queueing.Workload
	defer func() {
		if t.Failed() && last != nil {
			t.Logf("The Workload's conditions as last seen: %+v", last.Conditions)
		}
	}()
	framework.Eventually(t, "the Workload of "+job.Name+" "+what, func(ctx context.Context) (bool, error) {
		fresh, err := getJob(ctx, job)
		if err != nil {
			return false, err
		}
		last, err = queueing.FindWorkload(ctx, apiServer.Client, fresh)
		return err == nil && last != nil && cond(last), err
	})
	return last
}

// waitRunning waits until every pod of the job runs.
func waitRunning(t *testing.T, job *kubeflowv1.TFJob, want int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	framework.Eventually(t, fmt.Sprintf("%d running pods of %s", want, job.Name), func(ctx context.Context) (bool, error) {
		var err error
		pods, err = jobPods(ctx, job)
		running := 0
		for i := range pods {
			if pods[i].Status.Phase == corev1.PodRunning && pods[i].DeletionTimestamp == nil {
				running++
			}
		}
		return err == nil && running == want, err
	})
	return pods
}

// noPods checks that the job has no pod for the whole of quiet.
func noPods(t *testing.T, job *kubeflowv1.TFJob, why string) {
	t.Helper()
	framework.Consistently(t, "a pod of "+job.Name+" appeared "+why, quiet, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, job)
		return len(pods) > 0, err
	})
}

// quiet is how long a job is watched for something that must not happen:
// Kueue admits within a second when it can.
const quiet = 3 * time.Second

func suspended(job *kubeflowv1.TFJob) bool {
	return job.Spec.RunPolicy.Suspend != nil && *job.Spec.RunPolicy.Suspend
}

func conditionTrue(job *kubeflowv1.TFJob, t kubeflowv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func workloadCondition(w *queueing.Workload, t string) string {
	c := w.Condition(t)
	if c == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, strings.TrimSpace(c.Message))
}
