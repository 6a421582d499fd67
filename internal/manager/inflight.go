package manager

import (
	"io"
	"net/http"
	"strings"
	"sync"
)

// maxInFlight bounds the manager's requests in flight at once, watches
// and the leader's Lease aside. An apiserver serves at most its HTTP/2 stream limit of requests
// at once on a connection (--http2-max-streams-per-connection; 100 where
// it is not set), and client-go's transport dials a new TLS connection
// for every request beyond it, then closes all but one: in a catch-up
// the 32 workers, sending up to 16 creates each, kept the manager and
// the apiserver doing TLS handshakes instead of work. 64 stays below
// the limit beside the manager's watches, and is what the benchmark's
// plain client sends at once.
const maxInFlight = 64

// limitInFlight wraps the manager's transports so that at most n
// requests, watches aside, are in flight at once across all of them; a
// request waits for a slot, or for its context to end. A slot is held
// until the response's body is closed, since the stream stays open until
// then.
func limitInFlight(n int) func(http.RoundTripper) http.RoundTripper {
	slots := make(chan struct{}, n)
	return func(next http.RoundTripper) http.RoundTripper {
		return &inFlightLimiter{next: next, slots: slots}
	}
}

type inFlightLimiter struct {
	next  http.RoundTripper
	slots chan struct{}
}

// RoundTrip implements http.RoundTripper.
func (l *inFlightLimiter) RoundTrip(req *http.Request) (*http.Response, error) {
	if isWatch(req) || isLease(req) {
		// A watch holds its stream for as long as it lasts; the leader's
		// Lease renewal never waits behind a burst of writes (pacing.md).
		return l.next.RoundTrip(req)
	}
	select {
	case l.slots <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		<-l.slots
		return resp, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: func() { <-l.slots }}
	return resp, nil
}

// isWatch tells a watch from a request that ends with its response.
func isWatch(req *http.Request) bool {
	if req.URL == nil {
		return false
	}
	switch req.URL.Query().Get("watch") {
	case "true", "1":
		return true
	}
	return strings.Contains(req.URL.Path, "/watch/")
}

// isLease tells a request for a coordination.k8s.io Lease: leader
// election's.
func isLease(req *http.Request) bool {
	return req.URL != nil && strings.HasPrefix(req.URL.Path, "/apis/coordination.k8s.io/") && strings.Contains(req.URL.Path, "/leases")
}

// releasingBody releases its request's slot once, when closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

// Close implements io.Closer.
func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
