package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/test/framework"
)

// cluster is the local control plane and the harness's clients of it.
type cluster struct {
	dir   string
	api   *framework.APIServer
	cfg   *rest.Config // admin, no client-side rate limit, counted
	kube  kubernetes.Interface
	meta  metadata.Interface
	ctrl  client.WithWatch
	count *requestCounter // the harness's own requests
	paced bool            // managers run outside system:masters
}

// startCluster starts etcd and kube-apiserver (envtest, from bin/, on
// 127.0.0.1) and builds the harness's clients. The apiserver keeps its
// default --max-requests-inflight and --max-mutating-requests-inflight:
// every client here, the manager included, authenticates in
// system:masters, which API Priority and Fairness exempts from those
// limits, so raising them would change nothing.
func startCluster(dir string) (*cluster, error) {
	api, err := framework.StartAPIServer()
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, api: api, count: newRequestCounter()}
	c.cfg = rest.CopyConfig(api.Env.Config)
	c.cfg.QPS, c.cfg.Burst = -1, 0 // no client-side limit: the harness must never be the bottleneck
	c.cfg.UserAgent = "backfill-bench"
	c.cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &countingTransport{next: rt, counter: c.count} })
	if c.kube, err = kubernetes.NewForConfig(c.cfg); err == nil {
		if c.meta, err = metadata.NewForConfig(c.cfg); err == nil {
			c.ctrl, err = client.NewWithWatch(c.cfg, client.Options{Scheme: framework.Scheme()})
		}
	}
	if err != nil {
		_ = api.Stop()
		return nil, fmt.Errorf("building the harness's clients: %w", err)
	}
	return c, nil
}

// stop stops kube-apiserver and etcd by the processes envtest started.
func (c *cluster) stop() error { return c.api.Stop() }

// namespace creates a namespace and its default ServiceAccount.
func (c *cluster) namespace(ctx context.Context, name string) error {
	if err := c.api.CreateNamespace(ctx, name); err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// kubeconfig writes a kubeconfig for a process the harness runs: admin,
// or, once paceManagers was called, a user bound to cluster-admin outside
// system:masters, whom API Priority and Fairness paces as it would the
// manager's ServiceAccount in a cluster.
func (c *cluster) kubeconfig(name string) (string, error) {
	if c.paced {
		return c.api.UserKubeconfig(c.dir, name, pacedGroup)
	}
	return c.api.AdminKubeconfig(c.dir, name)
}

// pacedGroup holds the managers that paceManagers makes.
const pacedGroup = "backfill-bench-managers"

// paceManagers makes the managers started from now on users that API
// Priority and Fairness paces, bound to cluster-admin.
func (c *cluster) paceManagers(ctx context.Context) error {
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: pacedGroup},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: pacedGroup}},
	}
	if err := c.ctrl.Create(ctx, binding); err != nil {
		return fmt.Errorf("binding the managers to cluster-admin: %w", err)
	}
	c.paced = true
	return nil
}

// serverVersion is the apiserver's gitVersion, or "unknown".
func (c *cluster) serverVersion() string {
	v, err := c.kube.Discovery().ServerVersion()
	if err != nil {
		return "unknown"
	}
	return v.GitVersion
}

// scrapeAPIServer reads the apiserver's own request counters.
func (c *cluster) scrapeAPIServer(ctx context.Context) (requestCounts, error) {
	body, err := c.kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the apiserver's /metrics: %w", err)
	}
	return parseAPIServerRequests(body)
}

// controlPlaneCPU is the CPU time, in seconds, used so far by the
// kube-apiserver and etcd this harness started (its child processes).
func controlPlaneCPU() map[string]float64 {
	out := map[string]float64{}
	self := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		s, err := readStat(path)
		if err != nil || s.ppid != self {
			continue
		}
		if s.comm == "kube-apiserver" || s.comm == "etcd" {
			out[s.comm] += s.cpuSeconds
		}
	}
	return out
}

// procStat is what the harness reads of /proc/<pid>/stat.
type procStat struct {
	comm       string
	ppid       string
	cpuSeconds float64 // utime + stime
}

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// which Linux fixes at 100 for user space on every common architecture.
const userHZ = 100

func readStat(path string) (procStat, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("%s: unexpected format", path)
	}
	// After the command: state, ppid, ... utime is field 14, stime 15.
	fields := strings.Fields(s[end+1:])
	if len(fields) < 13 {
		return procStat{}, fmt.Errorf("%s: unexpected format", path)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return procStat{}, fmt.Errorf("%s: unexpected format", path)
	}
	return procStat{comm: s[open+1 : end], ppid: fields[1], cpuSeconds: (utime + stime) / userHZ}, nil
}

// requestCounter counts the harness's own requests by verb and resource,
// so that they can be told apart from the manager's in the apiserver's
// totals.
type requestCounter struct {
	mu     sync.Mutex
	counts requestCounts
}

func newRequestCounter() *requestCounter { return &requestCounter{counts: requestCounts{}} }

func (r *requestCounter) add(k requestKey) {
	r.mu.Lock()
	r.counts[k]++
	r.mu.Unlock()
}

func (r *requestCounter) snapshot() requestCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts.clone()
}

type countingTransport struct {
	next    http.RoundTripper
	counter *requestCounter
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if k, ok := classify(req.Method, req.URL.Path, req.URL.Query().Get("watch")); ok {
		if resp != nil {
			k.code = strconv.Itoa(resp.StatusCode)
		}
		t.counter.add(k)
	}
	return resp, err
}
