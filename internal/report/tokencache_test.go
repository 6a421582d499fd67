package report

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testclock "k8s.io/utils/clock/testing"

	"github.com/backfill-dev/backfill/internal/progress"
)

// jwtAuthn says of jwt(exp, "name") or jwt(exp, "name/salt") what the
// fixtures' fakeAuthn says of the token name, and counts its calls.
type jwtAuthn struct {
	fakeAuthn
	err error // when set, the answer to every token
}

func (a *jwtAuthn) Authenticate(ctx context.Context, token string) (Identity, error) {
	if a.err != nil {
		a.calls++
		return Identity{}, a.err
	}
	parts := strings.Split(token, ".")
	c := struct{ Sub string }{Sub: token}
	if len(parts) == 3 {
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		_ = json.Unmarshal(payload, &c)
	}
	name, _, _ := strings.Cut(c.Sub, "/")
	return a.fakeAuthn.Authenticate(ctx, name)
}

// cacheHandler is a handler over the fixtures whose tokens are JWTs.
type cacheHandler struct {
	*Handler
	authn   *jwtAuthn
	objects *fakeObjects
	clock   *testclock.FakePassiveClock
}

func newCacheHandler() *cacheHandler {
	ch := &cacheHandler{authn: &jwtAuthn{}, objects: newFakeObjects(), clock: testclock.NewFakePassiveClock(t0)}
	ch.Handler = NewHandler(ch.authn, ch.objects, progress.NewStore(), ch.clock, logr.Discard())
	return ch
}

// post sends a report of step 1 for job with token, checks its status, and
// that it cost wantCalls reviews since the handler started.
func (ch *cacheHandler) post(t *testing.T, job, token string, status, wantCalls int) {
	t.Helper()
	th := &testHandler{Handler: ch.Handler}
	rec := th.post(fmt.Sprintf("/v1/namespaces/%s/tfjobs/%s/progress", ns, job), token, `{"step": 1}`)
	if rec.Code != status {
		t.Errorf("%d %q, want %d", rec.Code, rec.Body.String(), status)
	}
	if ch.authn.calls != wantCalls {
		t.Errorf("%d reviews, want %d", ch.authn.calls, wantCalls)
	}
}

// TestTrustAfterAuthorization: a token is trusted once its report was
// authorized, and only then; trusted, its pod is still checked at every
// report.
func TestTrustAfterAuthorization(t *testing.T) {
	ch := newCacheHandler()
	good := jwt(t0.Add(time.Hour), "good")
	ch.post(t, "mnist", good, http.StatusNoContent, 1)
	ch.post(t, "mnist", good, http.StatusNoContent, 1)
	ch.clock.SetTime(t0.Add(cacheTTL))
	ch.post(t, "mnist", good, http.StatusNoContent, 2) // trusted for cacheTTL only

	short := jwt(t0.Add(cacheTTL+10*time.Second), "good/short")
	ch.post(t, "mnist", short, http.StatusNoContent, 3)
	ch.clock.SetTime(t0.Add(cacheTTL + 10*time.Second))
	ch.post(t, "mnist", short, http.StatusNoContent, 4) // never trusted past its exp

	ch.post(t, "mnist", "good", http.StatusNoContent, 5)
	ch.post(t, "mnist", "good", http.StatusNoContent, 6) // no exp: not trusted

	// Good tokens whose reports are refused are never trusted; their
	// refusal is remembered for that job for refusalTTL, so that the pods
	// of a deleted job cost no review at each report.
	other := jwt(t0.Add(time.Hour), "other")
	ch.post(t, "mnist", other, http.StatusForbidden, 7)
	ch.post(t, "mnist", other, http.StatusForbidden, 7)
	terminating := jwt(t0.Add(time.Hour), "terminating")
	ch.post(t, "mnist", terminating, http.StatusForbidden, 8)
	ch.post(t, "mnist", terminating, http.StatusForbidden, 8)
	ch.clock.SetTime(ch.clock.Now().Add(refusalTTL))
	ch.post(t, "mnist", terminating, http.StatusForbidden, 9)

	// A trusted token's pod that starts terminating reports nothing.
	ch.post(t, "mnist", good, http.StatusNoContent, 9)
	pod := ch.objects.pods[types.NamespacedName{Namespace: ns, Name: "mnist-worker-0"}]
	pod.DeletionTimestamp = &metav1.Time{Time: ch.clock.Now()}
	ch.post(t, "mnist", good, http.StatusForbidden, 9)
}

// TestMintedTokensKeepNoneOut: tokens minted by the thousand, good for
// reviews but not for reports, neither fill the trust nor push a
// reporting pod's token out of it.
func TestMintedTokensKeepNoneOut(t *testing.T) {
	ch := newCacheHandler()
	good := jwt(t0.Add(time.Hour), "good")
	ch.post(t, "mnist", good, http.StatusNoContent, 1)
	ch.clock.SetTime(t0.Add(cacheTTL / 2))
	for i := range cacheMax + 1 {
		ch.post(t, "mnist", jwt(t0.Add(time.Hour), fmt.Sprintf("other/%d", i)), http.StatusForbidden, 2+i)
	}
	calls := ch.authn.calls
	ch.post(t, "mnist", good, http.StatusNoContent, calls)
	ch.clock.SetTime(t0.Add(cacheTTL))
	ch.post(t, "mnist", good, http.StatusNoContent, calls+1)
	ch.post(t, "mnist", good, http.StatusNoContent, calls+1)
	if n := ch.tokens.trusted.len(); n != 1 {
		t.Errorf("%d tokens trusted, want the reporting pod's only", n)
	}
}

// TestTrustIsBounded: past cacheMax trusted tokens, the one used least
// lately goes.
func TestTrustIsBounded(t *testing.T) {
	c := newTokenCache()
	token := func(i int) string { return jwt(t0.Add(time.Hour), fmt.Sprintf("good/%d", i)) }
	for i := range cacheMax + 10 {
		c.trust(token(i), Identity{PodName: "p"}, t0)
		if i == cacheMax-1 {
			_, _, _ = c.lookup(token(0), t0) // used again as the cache fills
		}
	}
	if n := c.trusted.len(); n != cacheMax {
		t.Errorf("%d tokens trusted, want at most %d", n, cacheMax)
	}
	for i, want := range map[int]bool{0: true, 1: false, 10: false, 11: true, cacheMax + 9: true} {
		if _, _, ok := c.lookup(token(i), t0); ok != want {
			t.Errorf("token %d trusted: %v, want %v (the least lately used go first)", i, ok, want)
		}
	}
}

// TestRefusalsRemembered: a token refused for good is refused again
// without a review, for refusalTTL; one that could not be checked is
// checked again.
func TestRefusalsRemembered(t *testing.T) {
	ch := newCacheHandler()
	ch.post(t, "mnist", "bad", http.StatusUnauthorized, 1)
	ch.post(t, "mnist", "bad", http.StatusUnauthorized, 1)
	ch.post(t, "mnist", "gone", http.StatusForbidden, 2)
	ch.post(t, "mnist", "gone", http.StatusForbidden, 2)
	ch.clock.SetTime(t0.Add(refusalTTL))
	ch.post(t, "mnist", "bad", http.StatusUnauthorized, 3)

	ch.post(t, "mnist", "broken", http.StatusServiceUnavailable, 4)
	ch.post(t, "mnist", "broken", http.StatusServiceUnavailable, 5)

	c := newTokenCache()
	for i := range cacheMax + 10 {
		c.refuse(fmt.Sprintf("bad-%d", i), ErrUnauthenticated, t0)
	}
	if n := c.refused.len(); n != cacheMax {
		t.Errorf("%d refusals remembered, want at most %d", n, cacheMax)
	}
}

// TestBusy: a review the limits refused is a 503 that says when to retry,
// and is not remembered.
func TestBusy(t *testing.T) {
	ch := newCacheHandler()
	ch.authn.err = &busyError{retryAfter: 1500 * time.Millisecond, why: "too many reviews"}
	th := &testHandler{Handler: ch.Handler}
	for calls := 1; calls <= 2; calls++ {
		rec := th.post(goodPath, jwt(t0.Add(time.Hour), "good"), `{"step": 1}`)
		wantStatus(t, rec, http.StatusServiceUnavailable, "too many reviews")
		if got := rec.Header().Get("Retry-After"); got != "2" {
			t.Errorf("Retry-After %q, want 2 (whole seconds, rounded up)", got)
		}
		if ch.authn.calls != calls {
			t.Errorf("%d reviews, want %d", ch.authn.calls, calls)
		}
	}
}
