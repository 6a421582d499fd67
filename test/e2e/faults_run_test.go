//go:build e2e

package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

var (
	faultJobs = flag.Int("faults.jobs", 40, "TFJobs of the manager-kill fault test; the apiserver-restart and leader-failover tests run half as many")
	faultSeed = flag.Uint64("faults.seed", 0, "seed of the fault tests' random choices (scenarios, durations, fault times); 0 draws one, which the tests log")
)

// faultNS is the namespace of a fault run's TFJobs.
const faultNS = "faults"

// faultCluster is the local cluster of a fault test: room for every pod of
// 100 jobs at once, and no manager of its own (the test runs them).
var faultCluster = []string{"--cpu-nodes=3", "--gpu-nodes=0", "--node-cpu=32", "--node-memory=256Gi", "--manager=false"}

// faultRun is one run of TFJobs through faults: the jobs and their
// scenarios, a watch of every pod, and the injector that fails and evicts
// pods as the scenarios say.
type faultRun struct {
	t  *testing.T
	dc *devCluster
	// c is a client without the client-side rate limit of dc's, so that
	// the jobs are created at once.
	c       client.WithWatch
	rng     *rand.Rand
	jobs    []faultJob
	watch   *podWatch
	inject  *injector
	created time.Time
}

// newFaultRun starts the cluster, draws n jobs from the seed and starts
// watching and injecting; the jobs are not created yet.
func newFaultRun(t *testing.T, n int, clusterArgs ...string) *faultRun {
	t.Helper()
	seed := *faultSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("Fault run of %d TFJobs, seed %d (rerun with -faults.seed=%d)", n, seed, seed)
	dc := startCluster(t, append(slices.Clone(faultCluster), clusterArgs...)...)
	createNamespace(t, dc.client, faultNS)
	cfg, err := clientcmd.BuildConfigFromFlags("", dc.state.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: framework.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	r := &faultRun{t: t, dc: dc, c: c, rng: rand.New(rand.NewPCG(seed, 1))}
	r.jobs = planJobs(rand.New(rand.NewPCG(seed, 2)), n)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	r.watch = watchPods(ctx, c, faultNS)
	r.inject = newInjector(c, r.watch, r.jobs)
	go r.inject.run(ctx)
	return r
}

// createJobs creates every job, 16 at once, as a queue that admits a batch
// would.
func (r *faultRun) createJobs() {
	r.t.Helper()
	r.created = time.Now()
	g := errgroup.Group{}
	g.SetLimit(16)
	for _, j := range r.jobs {
		g.Go(func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return r.c.Create(ctx, j.tfJob(faultNS))
		})
	}
	if err := g.Wait(); err != nil {
		r.t.Fatalf("Creating the TFJobs: %v", err)
	}
	r.t.Logf("Created %d TFJobs in %v", len(r.jobs), time.Since(r.created).Round(100*time.Millisecond))
}

func finishedJob(job *kubeflowv1.TFJob) bool {
	for _, ctype := range []kubeflowv1.JobConditionType{kubeflowv1.JobSucceeded, kubeflowv1.JobFailed} {
		if c := findCondition(job, ctype); c != nil && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// waitFinished waits until every job succeeded or failed: no job is lost.
func (r *faultRun) waitFinished() {
	r.t.Helper()
	timeout := 3*time.Minute + time.Duration(len(r.jobs))*2*time.Second
	waitFor(r.t, timeout, fmt.Sprintf("all %d TFJobs to finish", len(r.jobs)), func(ctx context.Context) (bool, string, error) {
		var list kubeflowv1.TFJobList
		if err := r.c.List(ctx, &list, client.InNamespace(faultNS)); err != nil {
			return false, err.Error(), nil
		}
		var open []string
		for i := range list.Items {
			if !finishedJob(&list.Items[i]) {
				open = append(open, describeJob(&list.Items[i]))
			}
		}
		done, all := r.inject.doneCount()
		watched := r.watch.finishedCount()
		seen := fmt.Sprintf("%d of %d TFJobs open (%d seen finished by the watch), %d of %d faults injected: %s",
			len(open), len(list.Items), watched, done, all, strings.Join(first(open, 5), "; "))
		// The watch must have seen every end too: the checks order pod
		// deletions against it.
		return len(list.Items) == len(r.jobs) && len(open) == 0 && watched == len(r.jobs), seen, nil
	})
	r.t.Logf("Every TFJob finished %v after they were created", time.Since(r.created).Round(100*time.Millisecond))
}

func first(s []string, n int) []string {
	return s[:min(n, len(s))]
}

// check compares every job with what its pod history dictates: its last
// condition, a restart for each pod that failed and was replaced, a
// disruption for each pod disrupted, every fault injected, and never two
// live pods for one replica.
func (r *faultRun) check() {
	r.t.Helper()
	ctx := context.Background()
	var restarts, disruptions int32
	var reported, checkpointed int
	kinds := map[string]int{}
	for _, j := range r.jobs {
		kinds[j.kind]++
		job, err := getJob(ctx, r.c, faultNS, j.name)
		if err != nil {
			r.t.Errorf("Reading TFJob %s: %v", j.name, err)
			continue
		}
		restarts += job.Status.Restarts
		disruptions += job.Status.Disruptions
		if p := job.Status.Progress; p != nil && p.Step > 0 {
			reported++
			if p.CheckpointStep != nil {
				checkpointed++
			}
		}
		if problems := r.checkJob(j, job); len(problems) > 0 {
			r.t.Errorf("TFJob %s (%s, trains %v): %s\n  job: %s\n  pods: %s", j.name, j.kind, j.duration,
				strings.Join(problems, "; "), describeJob(job), r.watch.describe(j.name))
		}
	}
	if overlaps := r.watch.overlaps(); len(overlaps) > 0 {
		r.t.Errorf("Replicas with two live pods at once:\n%s", strings.Join(overlaps, "\n"))
	}
	var kindList []string
	for k, n := range kinds {
		kindList = append(kindList, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kindList)
	done, all := r.inject.doneCount()
	r.t.Logf("Checked %d TFJobs (%s): %d pods seen, %d of %d faults injected, %d restarts and %d disruptions counted; the pod watch listed again %d times",
		len(r.jobs), strings.Join(kindList, ", "), r.watch.size(), done, all, restarts, disruptions, r.watch.relistCount())
	// The simulated training code reports to whichever manager leads: a
	// job whose reporting replica ran only while none did has nothing to
	// show, but reports must have flowed through the faults.
	r.t.Logf("%d of %d TFJobs reported progress, %d a checkpoint", reported, len(r.jobs), checkpointed)
	if reported == 0 {
		r.t.Errorf("No TFJob reported progress: the report endpoint never served during the run")
	}
	if n := r.watch.relistCount(); n > 0 && r.t.Failed() {
		r.t.Logf("The pod watch had to list again %d times: a pod that came and went in between is missing from its history", n)
	}
}

// checkJob lists what is wrong with one job.
func (r *faultRun) checkJob(j faultJob, job *kubeflowv1.TFJob) []string {
	var problems []string
	last := lastCondition(job)
	if last.Type != j.wantPhase || last.Status != corev1.ConditionTrue || last.Reason != j.wantReason {
		problems = append(problems, fmt.Sprintf("last condition %s=%s/%s, want %s=True/%s", last.Type, last.Status, last.Reason, j.wantPhase, j.wantReason))
	}
	if j.wantPhase == kubeflowv1.JobSucceeded && r.dc.observer.jobEverFailed(faultNS, j.name) {
		problems = append(problems, "it was Failed at some point")
	}
	if j.wantPhase == kubeflowv1.JobFailed && slices.Contains(r.dc.observer.jobConditions(faultNS, j.name), "Succeeded=True/TFJobSucceeded") {
		problems = append(problems, "it was Succeeded at some point")
	}
	wantFailed, wantDisrupted := 0, 0
	for _, inj := range r.inject.of(j.name) {
		if !inj.done {
			problems = append(problems, fmt.Sprintf("the fault for %s was never injected (%d tries, last error %v)", inj.replica, inj.tries, inj.lastErr))
		}
		if inj.evict {
			wantDisrupted++
		} else {
			wantFailed++
		}
		if life, ok := r.watch.life(inj.pod); inj.done && ok {
			if inj.evict && life.disruption != reasonEviction {
				problems = append(problems, fmt.Sprintf("evicted pod %s shows no DisruptionTarget %s", life.name, reasonEviction))
			}
			if !inj.evict && (!life.failed || fmt.Sprint(life.exitCode) != inj.code) {
				problems = append(problems, fmt.Sprintf("pod %s made to exit %s did not fail with it", life.name, inj.code))
			}
		}
	}
	failed, disrupted := r.watch.counts(j.name)
	// A pod deleted by someone else is a disruption too: the simulated
	// kubelet (kwok) deletes by name, and a stale delete of an evicted
	// pod now and then removes the successor the operator just created.
	if failed != wantFailed || disrupted < wantDisrupted {
		problems = append(problems, fmt.Sprintf("%d pods failed and %d were disrupted, the scenario makes %d and at least %d", failed, disrupted, wantFailed, wantDisrupted))
	}
	if disrupted > wantDisrupted {
		r.t.Logf("TFJob %s: %d pods disrupted, %d of them by the test; the others were deleted by someone else while they ran: %s",
			j.name, disrupted, wantDisrupted, r.watch.describe(j.name))
	}
	wantRestarts := failed
	if j.fatal {
		wantRestarts--
	}
	if int(job.Status.Restarts) != wantRestarts || int(job.Status.Disruptions) != disrupted {
		problems = append(problems, fmt.Sprintf("status counts %d restarts and %d disruptions, the pods say %d and %d",
			job.Status.Restarts, job.Status.Disruptions, wantRestarts, disrupted))
	}
	return problems
}

// deleteAndCheckOrphans deletes every job and waits until no pod or
// service of theirs remains: the garbage collector removes them once the
// operator has released its finalizers.
func (r *faultRun) deleteAndCheckOrphans() {
	r.t.Helper()
	started := time.Now()
	err := r.c.DeleteAllOf(context.Background(), &kubeflowv1.TFJob{}, client.InNamespace(faultNS), client.PropagationPolicy("Background"))
	if err != nil {
		r.t.Fatalf("Deleting the TFJobs: %v", err)
	}
	ours := client.MatchingLabels{kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName}
	waitFor(r.t, 3*time.Minute, "no TFJob, pod or service left once the TFJobs are deleted", func(ctx context.Context) (bool, string, error) {
		var jobs kubeflowv1.TFJobList
		var pods corev1.PodList
		var services corev1.ServiceList
		lists := []struct {
			list client.ObjectList
			opts []client.ListOption
		}{
			{&jobs, []client.ListOption{client.InNamespace(faultNS)}},
			{&pods, []client.ListOption{client.InNamespace(faultNS), ours}},
			{&services, []client.ListOption{client.InNamespace(faultNS), ours}},
		}
		for _, l := range lists {
			if err := r.c.List(ctx, l.list, l.opts...); err != nil {
				return false, err.Error(), nil
			}
		}
		var left []string
		for i := range pods.Items {
			p := &pods.Items[i]
			left = append(left, fmt.Sprintf("pod %s (finalizers %v)", p.Name, p.Finalizers))
		}
		for i := range services.Items {
			left = append(left, "service "+services.Items[i].Name)
		}
		seen := fmt.Sprintf("%d TFJobs, %d pods, %d services left: %s", len(jobs.Items), len(pods.Items), len(services.Items), strings.Join(first(left, 5), ", "))
		return len(jobs.Items) == 0 && len(left) == 0, seen, nil
	})
	r.t.Logf("No orphan %v after the TFJobs were deleted", time.Since(started).Round(100*time.Millisecond))
}

// finishedNow describes how far the run is, for the log of a fault.
func (r *faultRun) finishedNow() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var list kubeflowv1.TFJobList
	if err := r.c.List(ctx, &list, client.InNamespace(faultNS)); err != nil {
		return "TFJobs unknown (" + err.Error() + ")"
	}
	n := 0
	for i := range list.Items {
		if finishedJob(&list.Items[i]) {
			n++
		}
	}
	return fmt.Sprintf("%d of %d TFJobs finished, %d deleted", n, len(r.jobs), len(r.jobs)-len(list.Items))
}
