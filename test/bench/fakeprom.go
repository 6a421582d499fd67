package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
	"github.com/backfill-dev/backfill/test/framework"
)

// usageModel is what the fake Prometheus says the nodes use. Online use is
// a share of the node's online requests:
//
//	share(t) = base + 0.05·sin(2π·t/30min + phase) + noise
//
// base (0.30–0.40, separately for cpu and memory) and phase are fixed per
// node, so shares stay within 25–45 %; noise is ±0.01, new every 15 s.
// The online peak is share + 0.03, the lasting online CPU share - 0.03;
// the system uses 0.2–0.4 CPU and 1.5–2 GiB, less than the kubelet
// reserves. The newest sample is from the last 30 s scrape. Everything is
// a function of the seed, the node and the query's time, so that two runs
// see the same usage.
type usageModel struct {
	seed  int64
	start time.Time
	// requests are the online requests per node: milli-CPU and bytes.
	requests map[string]reclaim.Resources
}

// Shape of the model.
const (
	driftAmplitude = 0.05
	driftPeriod    = 30 * time.Minute
	noiseStep      = 15 * time.Second
	noiseAmplitude = 0.01
	peakAbove      = 0.03
	scrapeInterval = 30 * time.Second
)

// unit is a deterministic number in [0, 1) for the seed and keys.
func (m *usageModel) unit(keys ...any) float64 {
	h := fnv.New64a()
	fmt.Fprint(h, m.seed)
	for _, k := range keys {
		fmt.Fprint(h, "/", k)
	}
	return float64(h.Sum64()>>11) / (1 << 53)
}

// share is the online use of one resource of a node at t, a fraction of
// its online requests.
func (m *usageModel) share(node, res string, t time.Time) float64 {
	base := 0.30 + 0.10*m.unit(node, res, "base")
	phase := 2 * math.Pi * m.unit(node, res, "phase")
	since := t.Sub(m.start)
	drift := driftAmplitude * math.Sin(2*math.Pi*since.Seconds()/driftPeriod.Seconds()+phase)
	noise := noiseAmplitude * (2*m.unit(node, res, int64(since/noiseStep)) - 1)
	return base + drift + noise
}

// modelQueries are the names, in reclaim.PrometheusSource.Queries, of the
// queries the model answers.
var modelQueries = map[string]bool{
	"online CPU peak": true, "lasting online CPU": true, "online memory peak": true,
	"system CPU": true, "system memory": true, "newest sample": true, "manager's series": true,
}

// answer is the value of a query for a node at t; ok is false for a query
// the model does not know.
func (m *usageModel) answer(query, node string, t time.Time) (float64, bool) {
	req := m.requests[node]
	cpu, mem := float64(req.MilliCPU)/1000, float64(req.Memory)
	switch query {
	case "online CPU peak":
		return cpu * (m.share(node, "cpu", t) + peakAbove), true
	case "lasting online CPU":
		return cpu * (m.share(node, "cpu", t) - peakAbove), true
	case "online memory peak":
		return mem * (m.share(node, "memory", t) + peakAbove), true
	case "system CPU":
		return 0.2 + 0.2*m.unit(node, "system cpu"), true
	case "system memory":
		return (1.5 + 0.5*m.unit(node, "system memory")) * (1 << 30), true
	case "newest sample":
		return float64(t.Truncate(scrapeInterval).Unix()), true
	}
	return 0, false
}

// queryOnlineCPUWait names the online signal's query of online pods' CPU
// wait, which the fake answers with no series.
const queryOnlineCPUWait = "online CPU wait"

// fakePrometheus answers the reclaim controller's queries, matched by
// their exact text (reclaim.PrometheusSource.Queries), from a usageModel;
// any other query gets an error, so that a change in the source shows.
// It serves /api/v1/query, by GET or POST, the one call the source makes.
type fakePrometheus struct {
	url     string
	model   *usageModel
	names   map[string]string // query text -> its name in Queries
	nodes   []string
	server  *http.Server
	mu      sync.Mutex
	byName  map[string]int
	unknown []string
	others  int // requests to any other path
}

// startFakePrometheus serves the model on a free port of 127.0.0.1 for
// the queries of reclaim.NewPrometheusSource(url, s, rateWindow).
func startFakePrometheus(model *usageModel, s reclaim.Settings, rateWindow time.Duration) (*fakePrometheus, error) {
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	url := "http://" + addr
	source, err := reclaim.NewPrometheusSource(url, s, rateWindow)
	if err != nil {
		return nil, err
	}
	p := &fakePrometheus{url: url, model: model, names: map[string]string{}, byName: map[string]int{}}
	for name, q := range source.Queries() {
		if !modelQueries[name] {
			return nil, fmt.Errorf("the fake Prometheus has no model for the source's query %q (%s): update test/bench/fakeprom.go", name, q)
		}
		p.names[q] = name
	}
	// The manager also reads its online signal there, over its own window;
	// the model's online pods declare no objective and nothing measures
	// their CPU wait.
	p.names[reclaim.CPUWaitQuery(s.OnlineWindow)] = queryOnlineCPUWait
	for node := range model.requests {
		p.nodes = append(p.nodes, node)
	}
	sort.Strings(p.nodes)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fake Prometheus: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/query", p.query)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		p.others++
		p.mu.Unlock()
		http.NotFound(w, nil)
	})
	p.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.server.Serve(ln) }()
	return p, nil
}

// stop closes the server.
func (p *fakePrometheus) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.server.Shutdown(ctx)
}

// queryCounts are the queries answered so far, in total and by name, the
// unknown ones and the requests to other paths.
type queryCounts struct {
	total   int
	byName  map[string]int
	unknown []string
	others  int
}

// since are the queries after before.
func (q queryCounts) since(before queryCounts) queryCounts {
	out := queryCounts{total: q.total - before.total, byName: map[string]int{}, unknown: q.unknown[len(before.unknown):], others: q.others - before.others}
	for name, n := range q.byName {
		out.byName[name] = n - before.byName[name]
	}
	return out
}

func (p *fakePrometheus) counts() queryCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := queryCounts{byName: map[string]int{}, unknown: append([]string(nil), p.unknown...), others: p.others}
	for name, n := range p.byName {
		out.byName[name] = n
		out.total += n
	}
	return out
}

// sample is one element of an instant vector in the API's JSON.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (p *fakePrometheus) query(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		apiError(w, http.StatusBadRequest, err)
		return
	}
	q := r.Form.Get("query")
	at := time.Now()
	if s := r.Form.Get("time"); s != "" {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil {
			apiError(w, http.StatusBadRequest, fmt.Errorf("time %q: %w", s, err))
			return
		}
		at = time.Unix(0, int64(secs*1e9))
	}
	name, known := p.names[q]
	p.mu.Lock()
	if known {
		p.byName[name]++
	} else {
		p.unknown = append(p.unknown, q)
	}
	p.mu.Unlock()
	if !known {
		apiError(w, http.StatusBadRequest, errors.New("the fake Prometheus of the benchmark does not know this query: update test/bench/fakeprom.go"))
		return
	}
	ts := float64(at.UnixMilli()) / 1000
	result := []sample{}
	if name == "manager's series" {
		result = append(result, sample{Metric: map[string]string{}, Value: [2]any{ts, strconv.Itoa(len(p.nodes))}})
	}
	for _, node := range p.nodes {
		if name == queryOnlineCPUWait {
			break
		}
		v, ok := p.model.answer(name, node, at)
		if !ok {
			break // the manager's series: one sample, not per node
		}
		result = append(result, sample{Metric: map[string]string{"node": node}, Value: [2]any{ts, strconv.FormatFloat(v, 'g', -1, 64)}})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": result}})
}

// apiError answers as Prometheus's HTTP API does when a query fails.
func apiError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": err.Error()})
}
