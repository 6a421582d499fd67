package reclaim

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/backfill-dev/backfill/internal/clusterview"
)

func TestDue(t *testing.T) {
	notice := 20 * time.Second
	stopAt := now.Add(10 * time.Second) // noticed 10 s ago
	pod := &clusterview.Pod{StopReason: ReasonReclaimedForOnline, StopAt: stopAt}
	cases := map[string]struct {
		checkpoint time.Time
		now        time.Time
		want       bool
	}{
		"under notice, no checkpoint":              {now: now},
		"a checkpoint from before the notice":      {checkpoint: now.Add(-time.Minute), now: now},
		"a checkpoint after the notice: at once":   {checkpoint: now.Add(-5 * time.Second), now: now, want: true},
		"the notice ran out":                       {now: stopAt, want: true},
		"the notice ran out long ago":              {now: stopAt.Add(time.Hour), want: true},
		"a checkpoint right as the notice started": {checkpoint: stopAt.Add(-notice), now: now},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := due(pod, tc.checkpoint, notice, tc.now); got != tc.want {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNoticeFor(t *testing.T) {
	c := &Controller{notice: 20 * time.Second}
	cases := map[string]struct {
		need         Resources
		wantNotice   time.Duration
		wantResource string
	}{
		"CPU short: the stop notice, to checkpoint":   {need: res(1000, 0), wantNotice: 20 * time.Second, wantResource: "cpu"},
		"memory short: no notice, memory never waits": {need: res(0, 1), wantResource: "memory"},
		"both short: no notice, counted as cpu":       {need: res(1000, 1), wantResource: "cpu"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Decision{Explanation: Explanation{Need: tc.need}}
			if got := c.noticeFor(d); got != tc.wantNotice {
				t.Errorf("notice = %v, want %v", got, tc.wantNotice)
			}
			if got := deficitResource(d); got != tc.wantResource {
				t.Errorf("evicted for %s, want %s", got, tc.wantResource)
			}
		})
	}
}

func TestResourceOf(t *testing.T) {
	for batch, want := range map[Resources]string{
		res(1000, 0): "cpu",
		res(0, 1):    "memory",
		res(1000, 1): "cpu",
	} {
		if got := resourceOf(&clusterview.Pod{Batch: batch}); got != want {
			t.Errorf("a noticed pod holding %s is evicted for %s, want %s", batch, got, want)
		}
	}
}

func TestEvictDue(t *testing.T) {
	notice := 20 * time.Second
	noticed := func(name, job string, stopAt time.Time) *clusterview.Pod {
		return &clusterview.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID("uid-" + name)},
			TFJob: job, Batch: res(1000, 1), StopReason: ReasonReclaimedForOnline, StopAt: stopAt}
	}
	terminating := noticed("terminating", "t", ago(time.Second))
	terminating.DeletionTimestamp = &metav1.Time{Time: ago(5 * time.Second)}
	otherReason := noticed("other-reason", "o", ago(time.Second))
	otherReason.StopReason = "Preempted"
	pods := []*clusterview.Pod{
		noticed("ran-out", "r", ago(time.Second)),
		noticed("waiting", "w", now.Add(10*time.Second)),
		noticed("checkpointed", "c", now.Add(10*time.Second)),
		terminating, // evicted already: being deleted
		otherReason, // stopped by someone else, not for online pods
	}
	checkpoints := map[string]time.Time{"ml/c": ago(5 * time.Second), "ml/w": ago(time.Minute)}

	var evicted []string
	cl := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		SubResourceCreate: func(_ context.Context, _ client.Client, sub string, obj client.Object, _ client.Object, _ ...client.SubResourceCreateOption) error {
			if sub == "eviction" {
				evicted = append(evicted, obj.GetName())
			}
			return nil
		},
	}).Build()
	c := &Controller{client: cl, notice: notice, log: logr.Discard()}
	if err := c.evictDueVictims(context.Background(), pods, checkpoints, now); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ran-out", "checkpointed"}, evicted); diff != "" {
		t.Errorf("evicted (-want +got):\n%s", diff)
	}
}
