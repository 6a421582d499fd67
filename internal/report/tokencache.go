package report

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// A token the TokenReview authenticated is taken on trust for a while, so
// that a pod reporting often costs the apiserver a review a minute, not
// one a report. Nothing a token is trusted for outlives its pod: every
// report still checks the pod in the manager's cache (authz.go). What the
// trust can outlast is the token's ServiceAccount being deleted, by up to
// cacheTTL (the apiserver itself caches reviews for about 10 s).
const (
	cacheTTL = time.Minute
	// cacheMax bounds the memory: about one token per reporting pod.
	cacheMax = 10000
)

// CachedAuthenticator remembers the identities next authenticated, by the
// token's SHA-256, for cacheTTL or until the token expires. Refusals are
// not remembered: a token refused now may be the pod's renewed one later.
type CachedAuthenticator struct {
	next  Authenticator
	clock clock.PassiveClock
	mu    sync.Mutex
	ids   map[[sha256.Size]byte]cachedIdentity
}

type cachedIdentity struct {
	id    Identity
	until time.Time
}

// NewCachedAuthenticator caches what next authenticates.
func NewCachedAuthenticator(next Authenticator, clk clock.PassiveClock) *CachedAuthenticator {
	return &CachedAuthenticator{next: next, clock: clk, ids: map[[sha256.Size]byte]cachedIdentity{}}
}

// Authenticate implements Authenticator.
func (c *CachedAuthenticator) Authenticate(ctx context.Context, token string) (Identity, error) {
	key := sha256.Sum256([]byte(token))
	now := c.clock.Now()
	c.mu.Lock()
	e, ok := c.ids[key]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.id, nil
	}
	id, err := c.next.Authenticate(ctx, token)
	if err != nil {
		return id, err
	}
	// Only a token whose expiry is known is cached: none is trusted past it.
	if exp, ok := expiry(token); ok {
		c.remember(key, cachedIdentity{id: id, until: earliest(exp, now.Add(cacheTTL))}, now)
	}
	return id, nil
}

// remember caches an identity, sweeping the expired ones when full; a
// cache still full caches nothing more.
func (c *CachedAuthenticator) remember(key [sha256.Size]byte, e cachedIdentity, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ids) >= cacheMax {
		for k, old := range c.ids {
			if !now.Before(old.until) {
				delete(c.ids, k)
			}
		}
	}
	if len(c.ids) < cacheMax {
		c.ids[key] = e
	}
}

// expiry is the exp claim of a JWT, read without verifying it: the
// TokenReview verified the token, this only keeps the cache from trusting
// it longer than it lives.
func expiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *int64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	return time.Unix(*claims.Exp, 0), true
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
