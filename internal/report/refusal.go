package report

import (
	"fmt"
	"net/http"
)

// refusal is a report turned away: the HTTP status and a short plain-text
// reason, for the training code's log, that says what to fix.
type refusal struct {
	status int
	reason string
}

func refuse(status int, format string, args ...any) *refusal {
	return &refusal{status: status, reason: fmt.Sprintf(format, args...)}
}

// write sends the refusal. A 401 names the scheme to use (RFC 6750); a 429
// says when to retry.
func (r *refusal) write(w http.ResponseWriter) {
	switch r.status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="backfill"`)
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
	}
	http.Error(w, r.reason, r.status)
}
