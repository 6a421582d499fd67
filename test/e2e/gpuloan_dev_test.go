//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/gpuloan"
)

// The demo's GPU inference (internal/devcluster/inference.go): KEDA scales
// it from one pod of 2 GPUs at night to 8, every GPU of the two GPU nodes,
// in the morning; the GPU backlog's jobs borrow the night's GPUs.
const (
	inferenceNamespace = "online-business"
	inferenceName      = "inference"
	inferenceDay       = 8
)

// checkMorningFindsGPUsFree: a morning's scale-up of the demo's GPU
// inference found its GPUs free. Training that borrowed them at night was
// told a checkpoint's time ahead and paused (a return on time, the job
// saying when it may borrow again); then the inference ran at every GPU
// with no pod of it waiting for a GPU training held: no missed return, no
// FailedScheduling event.
func checkMorningFindsGPUsFree(t *testing.T, c client.Client, prom string, paused *pausedLoans) {
	t.Helper()
	// The first morning returns the example jobs still training, the
	// second the backlog's, which starts on the first evening.
	pollValue(t, prom, "a GPU loan returned to the inference on time", `sum(backfill_gpu_loan_returns_total{outcome="on_time"})`, 3*demoDay, func(v float64) bool { return v >= 1 })
	paused.check(t)

	var ready time.Time
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 2*demoDay, true, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: inferenceNamespace, Name: inferenceName}, d); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		ready = time.Now()
		return d.Status.ReadyReplicas == inferenceDay, nil
	})
	if err != nil {
		t.Fatalf("Waiting for the morning's scale-up of the GPU inference to %d ready pods: %v", inferenceDay, err)
	}
	// The manager counts a waiting pod at its next decision, a second
	// later at most, and Prometheus scrapes it 5 s later: read the
	// counter once a scrape after that is in.
	missedQuery := `sum(backfill_gpu_loan_missed_returns_total)`
	pollValue(t, prom, "a scrape of the missed returns after the scale-up", `max(timestamp(backfill_gpu_loan_missed_returns_total))`, time.Minute, func(v float64) bool {
		return v > float64(ready.Add(2*time.Second).Unix())
	})
	if missed := queryValue(t, prom, missedQuery); missed != 0 {
		t.Errorf("%s = %v after the morning's scale-up, want 0: inference pods waited for GPUs training held", missedQuery, missed)
	}
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(inferenceNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "FailedScheduling" && strings.HasPrefix(e.InvolvedObject.Name, inferenceName+"-") {
			t.Errorf("Inference pod %s failed scheduling: %s", e.InvolvedObject.Name, e.Message)
		}
	}
	returns := queryValue(t, prom, `sum(backfill_gpu_loan_returns_total{outcome="on_time"})`)
	late := queryValue(t, prom, `sum(backfill_gpu_loan_returns_total{outcome="late"})`)
	lent := queryValue(t, prom, `max_over_time(sum(backfill_gpu_loan_lent_gpus)[`+dayWindow+`:5s])`)
	t.Logf("GPU loans: up to %.0f GPUs lent at night, %.0f returns on time and %.0f late, then %d inference pods ran with no missed return", lent, returns, late, inferenceDay)
}

// pausedLoans records the TFJobs seen paused by a returned GPU loan from
// the start of the day: a job paused one morning borrows again the next
// night, and may be running or done when the check reads it.
type pausedLoans struct {
	mu sync.Mutex
	// seen is the last sighting of each job while it was paused, by name.
	seen map[string]pausedLoan
	// unreadable are the loan annotations that did not parse.
	unreadable []error
}

type pausedLoan struct {
	state gpuloan.LoanState
	// suspended is the message of its Suspended condition for the return.
	suspended string
}

func watchPausedLoans(ctx context.Context, c client.WithWatch) *pausedLoans {
	p := &pausedLoans{seen: map[string]pausedLoan{}}
	go watchAll(ctx, c, &kubeflowv1.TFJobList{}, p.onJob, func([]client.Object) {})
	return p
}

func (p *pausedLoans) onJob(obj client.Object, _ bool) {
	job, ok := obj.(*kubeflowv1.TFJob)
	if !ok || job.Namespace != "ml-dev" {
		return
	}
	s, ok, err := gpuloan.ReadLoanState(job.Annotations)
	if err != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.unreadable = append(p.unreadable, fmt.Errorf("TFJob %s: %w", job.Name, err))
		return
	}
	if !ok || s.Phase != gpuloan.PhasePaused {
		return
	}
	msg := ""
	for _, cond := range job.Status.Conditions {
		if cond.Type == kubeflowv1.JobSuspended && cond.Reason == colocation.ReasonGPUsReturnedToOnline {
			msg = cond.Message
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[job.Name] = pausedLoan{state: s, suspended: msg}
}

// check: the jobs a morning paused said so, and when they may borrow
// again, and had their notice before the deadline: the GPU backlog's jobs,
// or on the first morning an example job still training.
func (p *pausedLoans) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, err := range p.unreadable {
		t.Error(err)
	}
	var seen []string
	for name, l := range p.seen {
		seen = append(seen, fmt.Sprintf("%s: %s", name, l.suspended))
		if !strings.Contains(l.suspended, "returned") || !strings.Contains(l.suspended, "next loan from ~") {
			t.Errorf("TFJob %s returned its loan (%+v); its Suspended condition says %q, want the GPUs returned and the next loan", name, l.state, l.suspended)
		}
		if !l.state.NoticeAt.Before(l.state.Deadline) {
			t.Errorf("TFJob %s: notice at %v, not before the deadline %v", name, l.state.NoticeAt, l.state.Deadline)
		}
	}
	if len(seen) == 0 {
		t.Errorf("No TFJob in ml-dev was seen paused by a returned loan")
	}
	sort.Strings(seen)
	t.Logf("Paused for the morning: %s", strings.Join(seen, "; "))
}
