package manager

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// At most n requests reach the server at once, however many are sent;
// watches are not counted, and a request whose context ends while it
// waits gives up.
func TestLimitInFlight(t *testing.T) {
	const n = 4
	release := make(chan struct{})
	var inFlight, most atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			_, _ = io.WriteString(w, "watch")
			return
		}
		now := inFlight.Add(1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	limited := limitInFlight(n)(srv.Client().Transport)
	client := &http.Client{Transport: limited}
	get := func(ctx context.Context, path string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.ReadAll(resp.Body)
		return resp.Body.Close()
	}

	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for range 3 * n {
		wg.Go(func() { errs <- get(context.Background(), "/api/v1/pods") })
	}
	for inFlight.Load() < n {
		time.Sleep(time.Millisecond) // until the first n are held by the server
	}
	if err := get(context.Background(), "/api/v1/pods?watch=true"); err != nil {
		t.Errorf("a watch while every slot is taken: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/pods", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := limited.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Errorf("a request whose context ended while waiting for a slot: %v, want %v", err, context.Canceled)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := most.Load(); got != n {
		t.Errorf("at most %d requests reached the server at once, want %d", got, n)
	}
}

func TestIsWatch(t *testing.T) {
	for url, want := range map[string]bool{
		"https://h/api/v1/namespaces/ns/pods?watch=true&resourceVersion=1": true,
		"https://h/api/v1/pods?watch=1":                                    true,
		"https://h/api/v1/watch/pods":                                      true,
		"https://h/api/v1/namespaces/ns/pods":                              false,
		"https://h/api/v1/namespaces/ns/pods?watch=false":                  false,
	} {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := isWatch(req); got != want {
			t.Errorf("isWatch(%s) = %v, want %v", url, got, want)
		}
	}
}

func TestIsLease(t *testing.T) {
	for url, want := range map[string]bool{
		"https://h/apis/coordination.k8s.io/v1/namespaces/backfill-system/leases/backfill-manager": true,
		"https://h/apis/coordination.k8s.io/v1/namespaces/backfill-system/leases":                  true,
		"https://h/api/v1/namespaces/backfill-system/configmaps/leases":                            false,
		"https://h/apis/kubeflow.org/v1/namespaces/ns/tfjobs/leases":                               false,
	} {
		req, err := http.NewRequest(http.MethodPut, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := isLease(req); got != want {
			t.Errorf("isLease(%s) = %v, want %v", url, got, want)
		}
	}
}
