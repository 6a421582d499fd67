package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/nodeagent"
)

// Simulated node agents: the apiserver's side of the node agent's
// DaemonSet, in the harness's own process. Each agent is the node agent's
// own nodeagent.Cluster: a SharedIndexInformer on the pods of its node
// (list and watch with fieldSelector spec.nodeName=<node>) and a
// controller-runtime client for the Eviction API, each agent with its own
// clients and its own connections to the apiserver, as a DaemonSet pod
// would have (a Proxy function makes client-go's transport cache build a
// transport per client). What they do not do is read cgroups: instead of
// the node's memory, a schedule decides when an agent evicts, at
// -agent-evictions (evictions per node per hour). An eviction is the
// agent's own: Rank (a LIST of the job's pods and a GET of its TFJob),
// then Evict (a dry-run eviction, the stop notice PATCH, the eviction).

// agentFleet is the running simulated agents.
type agentFleet struct {
	nodes    []string
	clusters []*nodeagent.Cluster
	count    *requestCounter // the agents' requests
	cancel   context.CancelFunc
	done     sync.WaitGroup
	// synced is how long until every agent had listed its node's pods.
	synced time.Duration
	// harnessRSS is the harness's RSS once they had, agents included.
	harnessRSS int64

	evictions, evictFailed, noCandidate atomic.Int64
	lastErr                             atomic.Value // string
}

// agentUserAgent names the agents' requests.
const agentUserAgent = "backfill-node-agent-sim"

// startAgents starts one agent for each of nodes and returns once every
// one has listed its node's pods; evictionsPerNodeHour (0: none) sets the
// eviction schedule of all of them together.
func startAgents(ctx context.Context, c *cluster, nodes []string, evictionsPerNodeHour float64) (*agentFleet, error) {
	// The agents' controller-runtime clients log nothing the run needs.
	ctrllog.SetLogger(logr.Discard())
	f := &agentFleet{nodes: nodes, count: newRequestCounter()}
	actx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	noProxy := func(*http.Request) (*url.URL, error) { return nil, nil }
	start := time.Now()
	for _, node := range nodes {
		cfg := rest.CopyConfig(c.api.Env.Config)
		cfg.UserAgent = agentUserAgent
		cfg.Proxy = noProxy // a transport of its own, not client-go's shared one
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &countingTransport{next: rt, counter: f.count} })
		cl, err := nodeagent.NewCluster(cfg, node, colocation.DefaultOfflinePriorityClass)
		if err != nil {
			f.stop()
			return nil, fmt.Errorf("agent of node %s: %w", node, err)
		}
		f.clusters = append(f.clusters, cl)
		f.done.Add(1)
		go func() { defer f.done.Done(); cl.Start(actx) }()
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Minute, true, func(context.Context) (bool, error) {
		for _, cl := range f.clusters {
			if !cl.Synced() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		f.stop()
		return nil, fmt.Errorf("waiting for %d agents to list their nodes' pods: %w", len(nodes), err)
	}
	f.synced = time.Since(start)
	f.harnessRSS = selfRSS()
	if evictionsPerNodeHour > 0 {
		interval := time.Duration(float64(time.Hour) / (evictionsPerNodeHour * float64(len(nodes))))
		f.done.Add(1)
		go func() { defer f.done.Done(); f.evict(actx, interval) }()
	}
	return f, nil
}

// evict has the next agent with a reclaimed pod on its node evict one,
// every interval, as the agent does under memory pressure.
func (f *agentFleet) evict(ctx context.Context, interval time.Duration) {
	next := 0
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		evicted := false
		for range f.clusters {
			cl := f.clusters[next]
			next = (next + 1) % len(f.clusters)
			if done, err := f.evictOne(ctx, cl); err != nil {
				if ctx.Err() != nil {
					return
				}
				f.evictFailed.Add(1)
				f.lastErr.Store(err.Error())
				evicted = true
				break
			} else if done {
				f.evictions.Add(1)
				evicted = true
				break
			}
		}
		if !evicted {
			f.noCandidate.Add(1)
		}
	}
}

// evictOne evicts the first of the node's reclaimed pods as the agent
// ranks them; false if the node has none.
func (f *agentFleet) evictOne(ctx context.Context, cl *nodeagent.Cluster) (bool, error) {
	pods, err := cl.Pods(ctx)
	if err != nil {
		return false, err
	}
	reclaimed := false
	for _, p := range pods {
		reclaimed = reclaimed || p.Reclaimed
	}
	if !reclaimed {
		return false, nil
	}
	ranked, err := cl.Rank(ctx)
	if err != nil {
		return false, err
	}
	for _, p := range ranked {
		if !p.Terminating {
			return true, cl.Evict(ctx, p)
		}
	}
	return false, nil
}

// stop ends every agent's watch and waits for them.
func (f *agentFleet) stop() {
	f.cancel()
	f.done.Wait()
}

// lastError is the last failed eviction's error, if any.
func (f *agentFleet) lastError() string {
	s, _ := f.lastErr.Load().(string)
	return s
}

// podWatches is the number of pod watches the apiserver serves now
// (apiserver_longrunning_requests, verb WATCH, resource pods).
func (c *cluster) podWatches(ctx context.Context) (float64, error) {
	body, err := c.kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the apiserver's /metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("parsing the apiserver's metrics: %w", err)
	}
	family := families["apiserver_longrunning_requests"]
	if family == nil {
		return 0, fmt.Errorf("the apiserver's /metrics has no apiserver_longrunning_requests")
	}
	total := 0.0
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["verb"] == "WATCH" && labels["resource"] == "pods" && labels["subresource"] == "" {
			total += m.GetGauge().GetValue()
		}
	}
	return total, nil
}

// selfRSS is the harness's own RSS in bytes (VmRSS), 0 if unknown.
func selfRSS() int64 {
	kb, err := strconv.ParseInt(strings.TrimSuffix(procField("/proc/self/status", "VmRSS"), " kB"), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

// childRSS is the RSS in bytes of the harness's child process named comm
// (kube-apiserver, etcd), 0 if there is none.
func childRSS(comm string) int64 {
	self := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		st, err := readStat(path)
		if err != nil || st.ppid != self || st.comm != comm {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(procField(filepath.Join(filepath.Dir(path), "status"), "VmRSS"), " kB"), 10, 64)
		if err == nil {
			return kb << 10
		}
	}
	return 0
}
