package report

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// refusal is a report turned away: the HTTP status and a short plain-text
// reason, for the training code's log, that says what to fix.
type refusal struct {
	status int
	reason string
	// retryAfter, of a 503, is when to try again.
	retryAfter time.Duration
}

func refuse(status int, format string, args ...any) *refusal {
	return &refusal{status: status, reason: fmt.Sprintf(format, args...)}
}

// write sends the refusal. A 401 names the scheme to use (RFC 6750); a 429
// and a 503 that knows when say when to retry, in whole seconds.
func (r *refusal) write(w http.ResponseWriter) {
	switch {
	case r.status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="backfill"`)
	case r.status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
	case r.retryAfter > 0:
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(r.retryAfter.Seconds()))))
	}
	http.Error(w, r.reason, r.status)
}
