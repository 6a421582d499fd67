package report

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	testclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestReviewRate: a burst of two seconds' reviews, then the rate; a
// refused review says when the next one passes.
func TestReviewRate(t *testing.T) {
	clk := testclock.NewFakePassiveClock(t0)
	l := newReviewLimiter(ReviewLimits{PerSecond: 2, InFlight: 10}, clk)
	for i := range 4 {
		release, err := l.acquire()
		if err != nil {
			t.Fatalf("review %d of the burst of 4: %v", i, err)
		}
		release()
	}
	_, err := l.acquire()
	var busy *busyError
	if !errors.As(err, &busy) || busy.retryAfter != 500*time.Millisecond {
		t.Fatalf("past the burst: %v, want a busyError to retry after 500ms", err)
	}
	clk.SetTime(t0.Add(500 * time.Millisecond))
	if _, err := l.acquire(); err != nil {
		t.Errorf("after 500ms: %v, want the next review", err)
	}
}

// TestReviewsInFlight: past InFlight reviews awaiting the apiserver, a
// review is refused at once, without spending the rate.
func TestReviewsInFlight(t *testing.T) {
	l := newReviewLimiter(ReviewLimits{PerSecond: 1, InFlight: 2}, testclock.NewFakePassiveClock(t0))
	first, err := l.acquire()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.acquire(); err != nil {
		t.Fatal(err)
	}
	var busy *busyError
	if _, err := l.acquire(); !errors.As(err, &busy) || busy.retryAfter != time.Second || !strings.Contains(busy.why, "at once") {
		t.Fatalf("a third review in flight: %v, want a busyError of the reviews in flight, to retry after 1s", err)
	}
	first()
	// The burst of 2 is spent: the refusal for the slots took none.
	if _, err := l.acquire(); !errors.As(err, &busy) || busy.retryAfter != time.Second || !strings.Contains(busy.why, "a second") {
		t.Errorf("with a slot free and the rate spent: %v, want a busyError of the rate, to retry after 1s", err)
	}
}

// TestTokenReviewerLimits: reviews past the in-flight cap are not sent,
// whoever sends them, and answer a busyError.
func TestTokenReviewerLimits(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int32
	arrived, unblock := make(chan struct{}), make(chan struct{})
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			sent.Add(1)
			arrived <- struct{}{}
			<-unblock
			return errors.New("the apiserver is slow")
		},
	}).Build()
	const inFlight = 3
	r := NewTokenReviewer(c, "backfill.dev", ReviewLimits{PerSecond: 100, InFlight: inFlight}, testclock.NewFakePassiveClock(t0))
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() { _, _ = r.Authenticate(context.Background(), theToken) })
		<-arrived
	}
	for range 10 {
		_, err := r.Authenticate(context.Background(), theToken)
		var busy *busyError
		if !errors.As(err, &busy) || errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("a review past %d in flight: %v, want a busyError", inFlight, err)
		}
	}
	close(unblock)
	wg.Wait()
	if n := sent.Load(); n != inFlight {
		t.Errorf("%d reviews sent, want %d", n, inFlight)
	}
}
