//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// scenario is what one TFJob of a fault run goes through: which of its
// first pods fail or are evicted, and so the phase its pod history
// dictates.
type scenario struct {
	kind string
	// fail makes the first pod of a replica exit with failCode soon
	// after it starts; evict evicts the first pod of a replica through
	// the Eviction API once it runs. Later pods of the replica run their
	// course.
	fail, evict string // replica type and index, "worker/0"; "" for none
	failCode    string
	// backoffLimit is the job's runPolicy.backoffLimit.
	backoffLimit int32
	// wantPhase and wantReason are the job's last condition at the end.
	wantPhase  kubeflowv1.JobConditionType
	wantReason string
	// fatal: the failed pod ends the job, so it is no restart.
	fatal bool
}

// scenarios cycle through a run's jobs (shuffled by the seed): success;
// an exit 137 retried under ExitCode (backoffLimit 1, so a restart counted
// twice would fail the job); an eviction (backoffLimit 0: a disruption
// charged to backoff would fail it); both in one job; an exit code
// ExitCode does not retry; and an exit 137 with no backoff left.
var scenarios = []scenario{
	{kind: "success", wantPhase: kubeflowv1.JobSucceeded, wantReason: "TFJobSucceeded"},
	{kind: "retry", fail: "worker/0", failCode: "137", backoffLimit: 1, wantPhase: kubeflowv1.JobSucceeded, wantReason: "TFJobSucceeded"},
	{kind: "evict", evict: "worker/0", wantPhase: kubeflowv1.JobSucceeded, wantReason: "TFJobSucceeded"},
	{kind: "retry-evict", fail: "worker/0", failCode: "137", evict: "worker/1", backoffLimit: 1, wantPhase: kubeflowv1.JobSucceeded, wantReason: "TFJobSucceeded"},
	{kind: "retry", fail: "worker/1", failCode: "137", backoffLimit: 1, wantPhase: kubeflowv1.JobSucceeded, wantReason: "TFJobSucceeded"},
	{kind: "evict", evict: "worker/1", wantPhase: kubeflowv1.JobSucceeded, wantReason: "TFJobSucceeded"},
	{kind: "exit-1", fail: "worker/1", failCode: "1", backoffLimit: 3, wantPhase: kubeflowv1.JobFailed, wantReason: "TFJobFailed", fatal: true},
	{kind: "no-backoff", fail: "worker/1", failCode: "137", wantPhase: kubeflowv1.JobFailed, wantReason: "BackoffLimitExceeded", fatal: true},
}

// faultJob is one TFJob of a run and its scenario.
type faultJob struct {
	name string
	scenario
	// duration is how long each pod that is not made to fail trains.
	duration time.Duration
}

// planJobs draws n jobs from the seed: scenarios in turn, shuffled, each
// training 20-40 s.
func planJobs(rng *rand.Rand, n int) []faultJob {
	jobs := make([]faultJob, n)
	for i := range jobs {
		s := scenarios[i%len(scenarios)]
		jobs[i] = faultJob{scenario: s, duration: time.Duration(20+rng.IntN(21)) * time.Second}
	}
	rng.Shuffle(n, func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	for i := range jobs {
		jobs[i].name = fmt.Sprintf("%s-%03d", jobs[i].kind, i)
	}
	return jobs
}

// tfJob is the job: two Workers of 100m CPU under restartPolicy ExitCode.
func (j faultJob) tfJob(ns string) *kubeflowv1.TFJob {
	w := makeTFJob(ns, j.name).Workers(2).CPU("100m").RestartPolicy(kubeflowv1.RestartPolicyExitCode).
		BackoffLimit(j.backoffLimit).SimDuration(j.duration.String())
	return w.Obj()
}

// replica is the key of one of the job's replicas ("worker/0").
func (j faultJob) replica(typeIndex string) replicaKey {
	return replicaKey(j.name + "/" + typeIndex)
}

// injection is one fault done to the first pod of a replica.
type injection struct {
	job     string
	replica replicaKey
	evict   bool
	code    string
	// pod is the pod it was done to, once done.
	pod  types.UID
	done bool
	// tries and lastErr say why it is not done yet.
	tries   int
	lastErr error
}

// injector fails and evicts the first pods of replicas as the scenarios
// say, looking at the watch every 250 ms: a pod to fail gets the
// simulation's exit-code annotation and a 2 s duration (kwok then ends it
// as a kubelet reports a container that exited); a pod to evict is
// evicted once it runs.
type injector struct {
	c       client.Client
	watch   *podWatch
	mu      sync.Mutex
	pending []*injection
}

func newInjector(c client.Client, w *podWatch, jobs []faultJob) *injector {
	in := &injector{c: c, watch: w}
	for _, j := range jobs {
		if j.fail != "" {
			in.pending = append(in.pending, &injection{job: j.name, replica: j.replica(j.fail), code: j.failCode})
		}
		if j.evict != "" {
			in.pending = append(in.pending, &injection{job: j.name, replica: j.replica(j.evict), evict: true})
		}
	}
	return in
}

func (in *injector) run(ctx context.Context) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		in.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// pass tries every injection not done yet whose pod is there to take it.
func (in *injector) pass(ctx context.Context) {
	in.mu.Lock()
	todo := make([]*injection, 0, len(in.pending))
	for _, inj := range in.pending {
		if !inj.done {
			todo = append(todo, inj)
		}
	}
	in.mu.Unlock()
	for _, inj := range todo {
		pod, ok := in.target(inj)
		if !ok {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := in.apply(cctx, inj, pod)
		cancel()
		in.mu.Lock()
		inj.tries++
		inj.lastErr = err
		if err == nil {
			inj.done, inj.pod = true, pod.UID
		}
		in.mu.Unlock()
	}
}

// target is the pod that takes inj now, if there is one.
func (in *injector) target(inj *injection) (*corev1.Pod, bool) {
	life, ok := in.watch.first(inj.replica)
	if !ok || !life.live() || life.last.DeletionTimestamp != nil {
		return nil, false
	}
	if inj.evict && life.last.Status.Phase != corev1.PodRunning {
		return nil, false
	}
	return life.last, true
}

// due says whether a fault not done yet has its pod there to take it. A
// control-plane restart waits until none is: a pod that ends while the
// apiserver is down would never get its fault.
func (in *injector) due() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, inj := range in.pending {
		if inj.done {
			continue
		}
		if _, ok := in.target(inj); ok {
			return true
		}
	}
	return false
}

func (in *injector) apply(ctx context.Context, inj *injection, pod *corev1.Pod) error {
	if inj.evict {
		eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
		return in.c.SubResource("eviction").Create(ctx, pod, eviction)
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			// The UID makes the patch fail rather than touch a successor.
			"uid": pod.UID,
			"annotations": map[string]string{
				kwok.SimExitCodeAnnotation: inj.code,
				kwok.SimDurationAnnotation: "2s",
			},
		},
	})
	if err != nil {
		return err
	}
	return in.c.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch))
}

// of are copies of the injections of a job.
func (in *injector) of(job string) []injection {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []injection
	for _, inj := range in.pending {
		if inj.job == job {
			out = append(out, *inj)
		}
	}
	return out
}

// doneCount counts the injections done.
func (in *injector) doneCount() (done, all int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, inj := range in.pending {
		if inj.done {
			done++
		}
	}
	return done, len(in.pending)
}
