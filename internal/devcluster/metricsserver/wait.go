package metricsserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// pollInterval is how often the waits here look again.
const pollInterval = 200 * time.Millisecond

// WaitServing polls metrics-server's /livez on address (host:port), checking
// its certificate against s's CA, until it answers 200 or timeout passes.
// It waits for liveness, not readiness: metrics-server is ready only once
// it has scraped a node with pods twice, and the local cluster's nodes may
// have none yet.
func WaitServing(ctx context.Context, address string, s Serving, done <-chan struct{}, timeout time.Duration) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CABundle) {
		return errors.New("metrics-server's CA bundle holds no certificate")
	}
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	return WaitOK(ctx, client, "https://"+address+"/livez", "metrics-server", done, timeout)
}

// WaitOK polls url with client (http.DefaultClient's transport, 2 s per
// request, when nil) until it answers 200, the server's process exits
// (done closes) or timeout passes. name names the server in errors.
func WaitOK(ctx context.Context, client *http.Client, url, name string, done <-chan struct{}, timeout time.Duration) error {
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Second}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		if ctx.Err() == nil {
			last = err
		}
		select {
		case <-done:
			return fmt.Errorf("%s exited while starting", name)
		case <-ctx.Done():
			if last == nil {
				last = ctx.Err()
			}
			return fmt.Errorf("%s not serving %s within %v: %w", name, url, timeout, last)
		case <-time.After(pollInterval):
		}
	}
}
