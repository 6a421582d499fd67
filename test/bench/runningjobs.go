package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// runningNamespace holds the reclaim-scale run's running TFJobs.
const runningNamespace = "running"

// reclaimedJob is the reclaim-scale run's training job: one worker of 2
// CPUs and 4 GiB and no GPU, on reclaimed capacity (the default), so that
// the manager moves its pod to the batch resources the reclaim controller
// publishes.
func reclaimedJob(namespace, name string) *kubeflowv1.TFJob {
	job := singleWorkerJob(namespace, name)
	w := &job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.Containers[0]
	delete(w.Resources.Requests, "nvidia.com/gpu")
	w.Resources.Limits = nil
	return job
}

// createRunningJobs creates n single-worker TFJobs on reclaimed capacity
// and has a manager (with the harness's fast client settings) create
// their pods; the harness binds job i's pod to nodes[i % len(nodes)], as
// a scheduler would (there is none), kwok runs it, and it returns once
// every job is Running and that manager is quiet and stopped. flags are
// the measured manager's, so that it sees the same reclaim settings.
func createRunningJobs(ctx context.Context, c *cluster, cfg config, flags, nodes []string, n int) (time.Duration, error) {
	start := time.Now()
	if err := c.namespace(ctx, runningNamespace); err != nil {
		return 0, err
	}
	names := jobNames("run", n)
	fmt.Printf("reclaim: creating %d running single-worker TFJobs on reclaimed capacity\n", n)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pods, err := c.watchArrivals(wctx, podsResource, runningNamespace)
	if err != nil {
		return 0, err
	}
	if _, err := createJobsOf(ctx, c.ctrl, reclaimedJob, runningNamespace, names, cfg.concurrency); err != nil {
		return 0, err
	}
	m, err := startManager(ctx, c, cfg.backfill, "manager-running-jobs", slices.Concat(flags, builderFlags))
	if err != nil {
		return 0, err
	}
	defer func() { _ = m.stop() }()
	if _, err := pods.waitFor(ctx, n); err != nil {
		return 0, fmt.Errorf("the running jobs' pods: %w; see %s", err, m.proc.LogPath())
	}
	fmt.Printf("reclaim: binding the %d jobs' pods to %d nodes\n", n, len(nodes))
	if err := bindPods(ctx, c, runningNamespace, replicaPods(names, "worker", 1), nodes, cfg.concurrency); err != nil {
		return 0, err
	}
	if err := waitJobs(ctx, c, runningNamespace, "run-", n, kubeflowv1.JobRunning); err != nil {
		return 0, fmt.Errorf("%w; see %s", err, m.proc.LogPath())
	}
	if _, err := m.settle(ctx, 3*time.Second); err != nil {
		return 0, err
	}
	took := time.Since(start)
	fmt.Printf("reclaim: %d TFJobs running after %s\n", n, took.Round(time.Second))
	return took, m.stop()
}

// countRunningJobs is how many of the run's TFJobs are Running now.
func countRunningJobs(ctx context.Context, c *cluster) (int, error) {
	var jobs kubeflowv1.TFJobList
	if err := c.ctrl.List(ctx, &jobs, client.InNamespace(runningNamespace)); err != nil {
		return 0, err
	}
	n := 0
	for _, j := range jobs.Items {
		conds := j.Status.Conditions
		if len(conds) > 0 && conds[len(conds)-1].Type == kubeflowv1.JobRunning &&
			conds[len(conds)-1].Status == corev1.ConditionTrue {
			n++
		}
	}
	return n, nil
}
