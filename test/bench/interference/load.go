package main

import (
	"context"
	"net/http"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// sample is one online request: when it was sent and how long it took.
type sample struct {
	start   time.Time
	latency time.Duration
	failed  bool
}

// stepPacer sends base requests per second, then from at on burst per
// second: an open loop, whatever the service answers.
type stepPacer struct {
	base, burst float64
	at          time.Duration
}

var _ vegeta.Pacer = stepPacer{}

// Pace waits until the hit numbered hits (from 0) is due; a pacer behind
// schedule sends at once.
func (p stepPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return p.due(hits) - elapsed, false
}

// due is when hit number h is sent.
func (p stepPacer) due(h uint64) time.Duration {
	before := p.base * p.at.Seconds()
	if float64(h) < before {
		return time.Duration(float64(h) / p.base * float64(time.Second))
	}
	return p.at + time.Duration((float64(h)-before)/p.burst*float64(time.Second))
}

// Rate is the requests per second due at elapsed.
func (p stepPacer) Rate(elapsed time.Duration) float64 {
	if elapsed < p.at {
		return p.base
	}
	return p.burst
}

// attack hits url at the pacer's rate for d from the bench's own process,
// outside kubepods, as a node's clients would, and returns every request.
// It ends early when ctx does.
func attack(ctx context.Context, url string, p vegeta.Pacer, d time.Duration) []sample {
	a := vegeta.NewAttacker(
		vegeta.Timeout(5*time.Second),
		vegeta.MaxBody(0),
		vegeta.Workers(32),
		vegeta.KeepAlive(true),
		vegeta.Redirects(vegeta.NoFollow),
	)
	target := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: url})
	results := a.Attack(target, p, d, "online")
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			a.Stop()
		case <-finished:
		}
	}()
	var out []sample
	for r := range results {
		out = append(out, sample{start: r.Timestamp, latency: r.Latency, failed: r.Error != ""})
	}
	return out
}
