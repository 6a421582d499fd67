package report

import (
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"
)

// ReviewLimits bound the TokenReviews the endpoint asks of the apiserver,
// across all callers: reviews are made under the manager's own identity,
// beside its node and pod writes, and a token of any shape costs one.
// Past either limit, a report whose token must be reviewed is answered
// 503 with Retry-After.
type ReviewLimits struct {
	// PerSecond is the rate of reviews, with bursts of Burst().
	PerSecond float64
	// InFlight is how many reviews may await the apiserver at once.
	InFlight int
}

// DefaultReviewLimits serve many reporting pods. A pod's token costs a
// review when first seen, then at most one a minute (cacheTTL): 50 a
// second serve 3,000 pods reporting without pause, and a manager that just
// took over, to whom every token is new, catches up with 1,000 pods in
// about 20 s (the report helper retries after Retry-After). A review takes
// the apiserver a millisecond or so: 10 at once keep up with that rate even
// when each takes 200 ms, and cap what forged tokens cost an apiserver
// that is slow already.
func DefaultReviewLimits() ReviewLimits { return ReviewLimits{PerSecond: 50, InFlight: 10} }

// Burst is how many reviews may be asked at once after a quiet time: two
// seconds' worth, at least one.
func (l ReviewLimits) Burst() int { return max(1, int(math.Ceil(2*l.PerSecond))) }

// busyError is a review the limits refused: retry after retryAfter. It is
// neither refusal of the token: the token could not be checked now.
type busyError struct {
	retryAfter time.Duration
	why        string
}

func (e *busyError) Error() string { return e.why }

// reviewLimiter keeps the limits: a token bucket and a count of the
// reviews in flight.
type reviewLimiter struct {
	limits ReviewLimits
	bucket *rate.Limiter
	slots  chan struct{}
	clock  clock.PassiveClock
}

func newReviewLimiter(limits ReviewLimits, clk clock.PassiveClock) *reviewLimiter {
	return &reviewLimiter{
		limits: limits,
		bucket: rate.NewLimiter(rate.Limit(limits.PerSecond), limits.Burst()),
		slots:  make(chan struct{}, max(1, limits.InFlight)),
		clock:  clk,
	}
}

// acquire takes one review from the limits, never waiting: it returns the
// release of its slot, or a busyError. A review refused for the reviews in
// flight spends nothing of the rate.
func (l *reviewLimiter) acquire() (release func(), err error) {
	select {
	case l.slots <- struct{}{}:
	default:
		return nil, &busyError{retryAfter: time.Second, why: fmt.Sprintf("the manager is awaiting %d token reviews from the apiserver already, its most at once", cap(l.slots))}
	}
	now := l.clock.Now()
	if !l.bucket.AllowN(now, 1) {
		<-l.slots
		wait := time.Duration((1 - l.bucket.TokensAt(now)) / l.limits.PerSecond * float64(time.Second))
		return nil, &busyError{retryAfter: wait, why: fmt.Sprintf("the manager asks the apiserver for at most %v token reviews a second, for all pods, and has used them", l.limits.PerSecond)}
	}
	return func() { <-l.slots }, nil
}
