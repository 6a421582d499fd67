//go:build integration

package reclaim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
	"github.com/backfill-dev/backfill/test/framework"
)

// latencyServer is an online service's request histogram as its pods
// would expose it: every 100 ms each pod serves ten requests of the
// latency the test sets. The suite's Prometheus scrapes it with
// honor_labels, as a PodMonitor keeps namespace and pod.
type latencyServer struct {
	addr    string
	latency atomic.Int64 // nanoseconds
	srv     *http.Server
	stopped chan struct{}
}

// latencyPods are the pods the server speaks for: the first online pod of
// nodeNames[1].
var latencyPods = []string{fmt.Sprintf("web-%s-0", nodeNames[1])}

func startLatencyServer() (*latencyServer, error) {
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	s := &latencyServer{addr: l.Addr().String(), stopped: make(chan struct{})}
	s.latency.Store(int64(50 * time.Millisecond))
	hist := promclient.NewHistogramVec(promclient.HistogramOpts{
		Name:    "http_server_request_duration_seconds",
		Help:    "Request latency of the suite's online service.",
		Buckets: []float64{0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 1},
	}, []string{"namespace", "pod"})
	reg := promclient.NewRegistry()
	reg.MustRegister(hist)
	s.srv = &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.stopped:
				return
			case <-tick.C:
			}
			for _, pod := range latencyPods {
				for range 10 {
					hist.WithLabelValues(onlineNS, pod).Observe(time.Duration(s.latency.Load()).Seconds())
				}
			}
		}
	}()
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

func (s *latencyServer) set(d time.Duration) { s.latency.Store(int64(d)) }

func (s *latencyServer) stop() error {
	close(s.stopped)
	if err := s.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// TestOnlineLatencyHoldsBack: an online workload declares a P99 objective
// of 200ms. When its pod beside training answers in 300ms the node stops
// growing, then gives back a step by evicting a training pod; when it
// answers in 50ms again the node is released after the recovery time and
// its capacity grows back.
func TestOnlineLatencyHoldsBack(t *testing.T) {
	dumpOnFailure(t)
	node, pod := nodeNames[1], latencyPods[0]
	ctx := context.Background()
	annotate := func(value *string) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, colocation.LatencyObjectiveAnnotation)
		if value != nil {
			patch = fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, colocation.LatencyObjectiveAnnotation, *value)
		}
		p := onlinePod(node, 0)
		if err := apiServer.Client.Patch(ctx, p, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	objective := "200ms"
	annotate(&objective)
	t.Cleanup(func() { annotate(nil); latency.set(50 * time.Millisecond) })

	job := trainingJob("beside-web", node, 2, "3", 10*time.Minute)
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiServer.Client.Delete(context.Background(), job) })
	eventually(t, settled, "the job's pods to run on "+node, func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		return running(pods, node) == 2, fmt.Sprintf("%d of 2 running", running(pods, node)), err
	})
	eventually(t, settled, "the workload's P99 with offline peers", func(ctx context.Context) (bool, string, error) {
		return gauge(t, "backfill_online_latency_p99_seconds", map[string]string{"workload": pod, "peers": reclaim.PeersWithOffline}) > 0, "", nil
	})
	holds, giveBacks, releases := actions(t)

	latency.set(300 * time.Millisecond)
	var e reclaim.Explanation
	eventually(t, settled, "node "+node+" to be held back and give back a step", func(ctx context.Context) (bool, string, error) {
		var err error
		e, _, err = explanation(ctx, node)
		return e.Online != nil && e.Online.Steps >= 1, fmt.Sprintf("%+v", e), err
	})
	if e.Online.Signal != reclaim.SignalLatency {
		t.Errorf("held back by %q, want %q", e.Online.Signal, reclaim.SignalLatency)
	}
	eventually(t, settled, "a training pod to be evicted", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		return running(pods, node) <= 1, fmt.Sprintf("%d running", running(pods, node)), err
	})
	checkNodeEvent(t, node, "OnlineHarmed")

	latency.set(50 * time.Millisecond)
	eventually(t, settled, "node "+node+" to be released once latency is healthy", func(ctx context.Context) (bool, string, error) {
		var err error
		e, _, err = explanation(ctx, node)
		return e.Online == nil, fmt.Sprintf("%+v", e), err
	})
	checkNodeEvent(t, node, "OnlineHealthy")
	h, g, r := actions(t)
	if h-holds < 1 || g-giveBacks < 1 || r-releases < 1 {
		t.Errorf("actions hold %v, give_back %v, release %v; want at least one of each", h-holds, g-giveBacks, r-releases)
	}
}

// actions are the counts of the online signal's actions.
func actions(t *testing.T) (hold, giveBack, release float64) {
	t.Helper()
	of := func(a string) float64 {
		return counter(t, "backfill_reclaim_online_actions_total", map[string]string{"action": a})
	}
	return of("hold"), of("give_back"), of("release")
}
