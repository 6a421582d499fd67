package report

import (
	"crypto/sha256"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// What the endpoint learnt of a token is remembered, by the token's
// SHA-256, so that a token sent again costs no TokenReview.
//
// A token whose report was authorized is trusted for cacheTTL, or until it
// expires, whichever is first: a pod reporting often costs the apiserver a
// review a minute, not one a report. Only an authorized token is trusted,
// so that tokens minted by the thousand (any pod's, in any namespace)
// cannot push the reporting pods' tokens out. Nothing a token is trusted
// for outlives its pod: every report still checks the pod in the
// manager's cache (authz.go). What the trust can outlast is the token's
// ServiceAccount being deleted, by up to cacheTTL (the apiserver itself
// caches reviews for about 10 s).
//
// A token the review refused for good (ErrUnauthenticated, ErrPodGone) is
// refused again without one for refusalTTL: briefly, as a token refused
// by an apiserver that had not yet seen a new signing key, or its pod, is
// good at the next report. A token that could not be checked is not
// remembered. So is, for refusalTTL, a reviewed token's refusal by
// authorization (its pod terminating, its job gone or not its own), per
// job: the pods of a deleted job report through their grace period, and
// each report would otherwise cost a review.
const (
	cacheTTL   = time.Minute
	refusalTTL = 10 * time.Second
	// cacheMax bounds each of the two memories, the least lately used
	// going first: about one token per reporting pod, and a few MB.
	cacheMax = 10000
)

type tokenKey [sha256.Size]byte

// tokenCache remembers trusted identities and refusals.
type tokenCache struct {
	mu      sync.Mutex
	trusted *lru[tokenKey, Identity]
	refused *lru[tokenKey, error]
	denied  *lru[tokenKey, *refusal]
}

func newTokenCache() *tokenCache {
	return &tokenCache{
		trusted: newLRU[tokenKey, Identity](cacheMax),
		refused: newLRU[tokenKey, error](cacheMax),
		denied:  newLRU[tokenKey, *refusal](cacheMax),
	}
}

// lookup is what is known of token at now: its identity, or the error it
// was refused with; false when nothing is.
func (c *tokenCache) lookup(token string, now time.Time) (Identity, error, bool) {
	key := sha256.Sum256([]byte(token))
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.trusted.get(key, now); ok {
		return id, nil, true
	}
	if err, ok := c.refused.get(key, now); ok {
		return Identity{}, err, true
	}
	return Identity{}, nil, false
}

// trust remembers the identity of an authorized token. Only a token whose
// expiry is known is trusted: none is trusted past it.
func (c *tokenCache) trust(token string, id Identity, now time.Time) {
	exp, ok := expiry(token)
	if !ok {
		return
	}
	key := sha256.Sum256([]byte(token))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trusted.add(key, id, earliest(exp, now.Add(cacheTTL)))
}

// refuse remembers a refusal for good.
func (c *tokenCache) refuse(token string, err error, now time.Time) {
	key := sha256.Sum256([]byte(token))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refused.add(key, err, now.Add(refusalTTL))
}

// deny remembers that authorization refused token's report for job.
func (c *tokenCache) deny(token string, job types.NamespacedName, refused *refusal, now time.Time) {
	key := deniedKey(token, job)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.denied.add(key, refused, now.Add(refusalTTL))
}

// denial is the refusal remembered for token's report for job, if any.
func (c *tokenCache) denial(token string, job types.NamespacedName, now time.Time) (*refusal, bool) {
	key := deniedKey(token, job)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.denied.get(key, now)
}

func deniedKey(token string, job types.NamespacedName) tokenKey {
	return sha256.Sum256([]byte(job.String() + "\x00" + token))
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
