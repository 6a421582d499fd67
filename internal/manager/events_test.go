package manager

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// The controllers' events are sent as protobuf; the manager's own config,
// which controller-runtime's TFJob client uses, is left as it was.
func TestEventsSentAsProtobuf(t *testing.T) {
	var mu sync.Mutex
	var sent []string // Content-Type of each event created
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/events") {
			mu.Lock()
			sent = append(sent, r.Header.Get("Content-Type"))
			mu.Unlock()
		}
		w.Header().Set("Content-Type", runtime.ContentTypeJSON)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"e","namespace":"ns"}}`))
	}))
	defer srv.Close()

	cfg := &rest.Config{Host: srv.URL}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	recorders, err := newEventRecorders(cfg, httpClient, Scheme(), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer recorders.stop()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1"}}
	recorders.recorder("test-controller").Eventf(pod, nil, corev1.EventTypeNormal, "Tested", "Test", "an event")

	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(sent)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 || sent[0] != runtime.ContentTypeProtobuf {
		t.Errorf("events created with Content-Type %q, want one with %q", sent, runtime.ContentTypeProtobuf)
	}
	if cfg.ContentType != "" || cfg.AcceptContentTypes != "" {
		t.Errorf("the manager's config was changed to ContentType %q, AcceptContentTypes %q; want both unset", cfg.ContentType, cfg.AcceptContentTypes)
	}
}
