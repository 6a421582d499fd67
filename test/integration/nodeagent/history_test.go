//go:build integration

package nodeagent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// podState is what one version of a pod says of its stop.
type podState struct {
	noticed, deleting bool
}

// history records every version of a pod the apiserver serves from now
// on, to tell in which order the agent wrote its notice and its eviction.
type history struct {
	mu     sync.Mutex
	states []podState
}

func watchPod(t *testing.T, pod *corev1.Pod) *history {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := clientset.CoreV1().Pods(pod.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", pod.Name).String(),
		ResourceVersion: pod.ResourceVersion, // every change after the test's last write
	})
	if err != nil {
		cancel()
		t.Fatalf("Watching pod %s: %v", pod.Name, err)
	}
	h := &history{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range w.ResultChan() {
			if p, ok := e.Object.(*corev1.Pod); ok {
				h.mu.Lock()
				h.states = append(h.states, stateOf(p))
				h.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
	return h
}

func stateOf(p *corev1.Pod) podState {
	return podState{noticed: p.Annotations[colocation.StopReasonAnnotation] == reclaim.ReasonReclaimedForOnline, deleting: p.DeletionTimestamp != nil}
}

func (h *history) snapshot() []podState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]podState(nil), h.states...)
}

// current is the pod as the apiserver has it now; gone is true when it
// was deleted for good.
func current(t *testing.T, pod *corev1.Pod) (state podState, gone bool) {
	t.Helper()
	var p corev1.Pod
	err := apiServer.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), &p)
	if apierrors.IsNotFound(err) {
		return podState{}, true
	}
	if err != nil {
		t.Fatal(err)
	}
	if p.UID != pod.UID {
		return podState{}, true // a replacement of the same name
	}
	return stateOf(&p), false
}

// budgetSpender is a proxy in front of the apiserver that spends a
// PodDisruptionBudget right after the agent writes its stop notice on a
// pod, between the Eviction API's dry run and the eviction: what another
// eviction of the same budget does at the wrong moment.
func budgetSpender(t *testing.T, spend func() error) *rest.Config {
	t.Helper()
	target, err := url.Parse(apiServer.Env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(apiServer.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	proxy.FlushInterval = -1 // watches stream
	var once sync.Once
	// Before the agent hears the patch went through, so before it evicts.
	proxy.ModifyResponse = func(resp *http.Response) error {
		var err error
		if r := resp.Request; r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/pods/") && resp.StatusCode == http.StatusOK {
			once.Do(func() { err = spend() })
		}
		return err
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}
