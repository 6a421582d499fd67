package report

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	testclock "k8s.io/utils/clock/testing"
)

// jwt is a token shaped like a JWT with the exp claim, or none (exp 0).
func jwt(exp time.Time, salt string) string {
	claims := `{"sub":"` + salt + `"}`
	if !exp.IsZero() {
		claims = fmt.Sprintf(`{"sub":%q,"exp":%d}`, salt, exp.Unix())
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2ln"
}

// countingAuthn authenticates every token but "refused", counting calls.
type countingAuthn struct{ calls int }

func (c *countingAuthn) Authenticate(_ context.Context, token string) (Identity, error) {
	c.calls++
	if token == jwt(t0.Add(time.Hour), "refused") {
		return Identity{}, ErrUnauthenticated
	}
	return Identity{Namespace: "ml", PodName: "p", PodUID: "u"}, nil
}

func TestCachedAuthenticator(t *testing.T) {
	ctx := context.Background()
	next := &countingAuthn{}
	clk := testclock.NewFakePassiveClock(t0)
	c := NewCachedAuthenticator(next, clk)
	authn := func(token string, wantCalls int) {
		t.Helper()
		_, _ = c.Authenticate(ctx, token)
		if next.calls != wantCalls {
			t.Errorf("%d reviews, want %d", next.calls, wantCalls)
		}
	}
	long := jwt(t0.Add(time.Hour), "long")
	authn(long, 1)
	authn(long, 1) // cached
	clk.SetTime(t0.Add(cacheTTL))
	authn(long, 2) // trusted for cacheTTL only

	short := jwt(t0.Add(cacheTTL+10*time.Second), "short")
	authn(short, 3)
	clk.SetTime(t0.Add(cacheTTL + 10*time.Second))
	authn(short, 4) // never trusted past its exp

	authn("opaque", 5)
	authn("opaque", 6) // no exp: not cached

	refused := jwt(t0.Add(time.Hour), "refused")
	if _, err := c.Authenticate(ctx, refused); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("refused: %v", err)
	}
	authn(refused, 8) // refusals are not cached
}

func TestExpiry(t *testing.T) {
	if exp, ok := expiry(jwt(t0, "x")); !ok || !exp.Equal(t0) {
		t.Errorf("expiry %v %v, want %v", exp, ok, t0)
	}
	for _, token := range []string{"", "a.b", "a.!!.c", "a." + base64.RawURLEncoding.EncodeToString([]byte("[]")) + ".c", jwt(time.Time{}, "no exp")} {
		if _, ok := expiry(token); ok {
			t.Errorf("expiry of %q known", token)
		}
	}
}
