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
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := "https://" + address + "/livez"
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
			return errors.New("metrics-server exited while starting")
		case <-ctx.Done():
			return fmt.Errorf("metrics-server not serving %s within %v: %w", url, timeout, last)
		case <-time.After(pollInterval):
		}
	}
}
