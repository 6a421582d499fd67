package cli

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// getFixture is two namespaces of jobs in every state get shows.
func getFixture() ([]kubeflowv1.TFJob, jobPods) {
	dist := makeJob("research", "mnist", 3*time.Hour+5*time.Minute).
		replicas(kubeflowv1.ReplicaTypeChief, 1, 1).replicas(kubeflowv1.ReplicaTypePS, 2, 0).replicas(kubeflowv1.ReplicaTypeWorker, 4, 4).
		condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "TFJob research/mnist is created.", 3*time.Hour).
		condition(kubeflowv1.JobRunning, corev1.ConditionTrue, "TFJobRunning", "TFJob research/mnist is running.", 2*time.Hour).
		counts(2, 1).
		progress(48210, 7, 31*time.Minute, 45000, 45*time.Minute).
		goodput(2*time.Hour, 15*time.Minute, 10*time.Minute, 20*time.Minute, 20*time.Minute, -1).obj()
	pending := makeJob("research", "resnet", 90*time.Second).replicas(kubeflowv1.ReplicaTypeWorker, 2, 8).
		condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "TFJob research/resnet is created.", 80*time.Second).
		goodput(0, 0, 0, 10*time.Second, 80*time.Second, -1).obj()
	done := makeJob("default", "single", 49*time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
		condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "", 49*time.Hour).
		condition(kubeflowv1.JobRunning, corev1.ConditionFalse, "TFJobRunning", "", 48*time.Hour).
		condition(kubeflowv1.JobSucceeded, corev1.ConditionTrue, "TFJobSucceeded", "", 48*time.Hour).
		progress(10000, -1, 48*time.Hour, 10000, 48*time.Hour).
		goodput(59*time.Minute, 0, 0, time.Minute, 48*time.Hour, -1).obj()
	// Its pods ask for reclaimed capacity, which no node publishes.
	unpublished := makeJob("research", "bert", 4*time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 2, 0).
		condition(kubeflowv1.JobCapacityPending, corev1.ConditionTrue, "UsageSourceUnavailable", "TFJob research/bert waits: its pods ask for reclaimed capacity and no node publishes any: the metrics-api usage source fails.", 4*time.Minute).
		condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "TFJob research/bert is created.", 4*time.Minute).obj()
	fresh := makeJob("default", "unseen", 5*time.Second).replicas(kubeflowv1.ReplicaTypeWorker, 3, 0).priorityClass("batch-low").obj()
	queued := makeJob("research", "llama", 10*time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 12, 0).queue("training", true).
		condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "TFJob research/llama is created.", 10*time.Minute).
		condition(kubeflowv1.JobSuspended, corev1.ConditionTrue, "TFJobSuspended", "TFJob research/llama is suspended.", 10*time.Minute).
		goodput(0, 0, 0, 10*time.Minute, 0, -1).obj()

	pods := jobPods{
		"research/mnist": {
			running(podOf(dist, kubeflowv1.ReplicaTypeChief, 0), "gpu-node-0", 0),
			running(podOf(dist, kubeflowv1.ReplicaTypePS, 0), "cpu-node-0", 0),
			running(podOf(dist, kubeflowv1.ReplicaTypePS, 1), "cpu-node-1", 0),
			running(podOf(dist, kubeflowv1.ReplicaTypeWorker, 0), "gpu-node-0", 0),
			crashLooping(podOf(dist, kubeflowv1.ReplicaTypeWorker, 1), "gpu-node-1", 2),
			unschedulable(podOf(dist, kubeflowv1.ReplicaTypeWorker, 2), gpuMessage),
			unschedulable(podOf(dist, kubeflowv1.ReplicaTypeWorker, 3), gpuMessage),
		},
		"research/bert": {
			unschedulable(podOf(unpublished, kubeflowv1.ReplicaTypeWorker, 0), batchCPUMessage),
			unschedulable(podOf(unpublished, kubeflowv1.ReplicaTypeWorker, 1), batchCPUMessage),
		},
		"research/resnet": {
			unschedulable(podOf(pending, kubeflowv1.ReplicaTypeWorker, 0), gpuMessage),
			unschedulable(podOf(pending, kubeflowv1.ReplicaTypeWorker, 1), gpuMessage),
		},
	}
	return []kubeflowv1.TFJob{*done, *fresh, *dist, *pending, *queued, *unpublished}, pods
}

// batchCPUMessage is the scheduler's on a pod that asks for reclaimed
// capacity in a cluster where no node publishes any.
const batchCPUMessage = "0/3 nodes are available: 3 Insufficient backfill.dev/batch-cpu, 3 Insufficient backfill.dev/batch-memory. preemption: not eligible due to preemptionPolicy=Never."

func TestGetTable(t *testing.T) {
	for name, opts := range map[string]tableOptions{
		"get":         {},
		"get-wide":    {wide: true},
		"get-all-ns":  {namespace: true},
		"get-wide-ns": {wide: true, namespace: true},
	} {
		t.Run(name, func(t *testing.T) {
			jobs, pods := getFixture()
			var out bytes.Buffer
			if err := renderJobTable(&out, jobs, pods, opts, fixedNow); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, out.String())
		})
	}
}

func TestGetPrintsObjects(t *testing.T) {
	jobs, _ := getFixture()
	for name, tc := range map[string]struct {
		format string
		jobs   []kubeflowv1.TFJob
		single bool
	}{
		"get-name":        {format: outputName, jobs: jobs},
		"get-yaml-single": {format: outputYAML, jobs: jobs[1:2], single: true},
		"get-json-list":   {format: outputJSON, jobs: jobs[:2]},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printJobs(&out, tc.format, tc.jobs, tc.single); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, out.String())
		})
	}
}

func TestCheckOutputRefusesUnknownFormats(t *testing.T) {
	err := checkOutput("table", outputTable, outputWide, outputYAML)
	if err == nil || !isUsageError(err) || err.Error() != `unknown output format "table": use -o wide|yaml` {
		t.Fatalf("checkOutput(table) = %v, want a usage error listing wide|yaml", err)
	}
	if err := checkOutput(outputWide, outputTable, outputWide); err != nil {
		t.Fatalf("checkOutput(wide) = %v", err)
	}
}
