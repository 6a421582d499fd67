package metricsserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitOKWaitsForStatus200(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if err := WaitOK(context.Background(), nil, srv.URL, "test server", nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (two 503s, then 200)", n)
	}
}

func TestWaitOKStopsWhenTheProcessExits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	done := make(chan struct{})
	close(done)
	err := WaitOK(context.Background(), nil, srv.URL, "test server", done, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "test server exited while starting") {
		t.Fatalf("error %v, want test server exited while starting", err)
	}
}
