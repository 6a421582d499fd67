package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/backfill-dev/backfill/internal/devcluster/process"
	"github.com/backfill-dev/backfill/test/framework"
)

// manager is `backfill manager` running as a child process of the
// harness, its metrics on a loopback port.
type manager struct {
	proc    *process.Process
	metrics string // URL of its /metrics
	args    []string
	// scrapes counts the harness's reads of its /metrics: each gathers
	// every series, whichever it asks for.
	scrapes atomic.Int64
}

// startManager runs `backfill manager` with the harness's kubeconfig,
// metrics on a free loopback port, no health probes and error-level logs,
// then extra flags; it returns once /metrics answers.
func startManager(ctx context.Context, c *cluster, binary, name string, extra []string) (*manager, error) {
	return startManagerWithEnv(ctx, c, binary, name, extra, nil)
}

// startManagerWithEnv is startManager with variables added to the
// harness's environment.
func startManagerWithEnv(ctx context.Context, c *cluster, binary, name string, extra, env []string) (*manager, error) {
	kubeconfig, err := c.kubeconfig(name)
	if err != nil {
		return nil, err
	}
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"manager",
		"--kubeconfig=" + kubeconfig,
		"--metrics-bind-address=" + addr,
		"--health-probe-bind-address=0",
		"--log-level=error",
	}, extra...)
	if env != nil {
		env = append(os.Environ(), env...)
	}
	proc, err := process.Start(binary, args, env, filepath.Join(c.dir, name+".log"))
	if err != nil {
		return nil, err
	}
	m := &manager{proc: proc, metrics: "http://" + addr + "/metrics", args: args}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-proc.Done():
			return false, fmt.Errorf("the manager exited at start: %w; see %s", proc.Wait(), proc.LogPath())
		default:
		}
		_, err := m.scrape(ctx, "rest_client_requests_total")
		return err == nil, nil
	})
	if err != nil {
		_ = m.stop()
		return nil, fmt.Errorf("waiting for the manager's /metrics: %w", err)
	}
	return m, nil
}

// stop sends SIGTERM to the manager's PID and waits for it.
func (m *manager) stop() error { return m.proc.Stop(15 * time.Second) }

// usage is the manager's CPU and memory as the kernel accounts them.
type usage struct {
	cpuSeconds float64 // utime + stime since start
	peakRSS    int64   // VmHWM, bytes
	rss        int64   // VmRSS, bytes
	// anonRSS is RssAnon, bytes: the RSS but the pages of files (mostly
	// the binary's own code), which the kernel can drop and read again;
	// a container's limit cannot.
	anonRSS int64
}

// usage reads /proc/<pid>/stat and /proc/<pid>/status of the manager.
func (m *manager) usage() (usage, error) {
	pid := strconv.Itoa(m.proc.PID())
	s, err := readStat("/proc/" + pid + "/stat")
	if err != nil {
		return usage{}, err
	}
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return usage{}, err
	}
	u := usage{cpuSeconds: s.cpuSeconds}
	for _, line := range strings.Split(string(data), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "VmHWM":
			u.peakRSS = kb << 10
		case "VmRSS":
			u.rss = kb << 10
		case "RssAnon":
			u.anonRSS = kb << 10
		}
	}
	return u, nil
}

// managerMetrics are the manager's own Prometheus series, by name and
// then by their labels rendered as text.
type managerMetrics map[string]map[string]float64

// scrape reads the manager's /metrics: counters, gauges and untyped
// series; only the metrics named, if any (see families).
func (m *manager) scrape(ctx context.Context, names ...string) (managerMetrics, error) {
	families, err := m.families(ctx, names...)
	if err != nil {
		return nil, err
	}
	out := managerMetrics{}
	for name, f := range families {
		series := map[string]float64{}
		for _, metric := range f.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := metric.GetCounter().GetValue() + metric.GetGauge().GetValue() + metric.GetUntyped().GetValue()
			series[strings.Join(labels, ",")] = v
		}
		out[name] = series
	}
	return out, nil
}

// total sums a metric's series whose labels contain every fragment.
func (mm managerMetrics) total(name string, fragments ...string) float64 {
	sum := 0.0
	for labels, v := range mm[name] {
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(labels, f)
		}
		if ok {
			sum += v
		}
	}
	return sum
}

// clientRequests is the manager's rest_client_requests_total by method.
func (mm managerMetrics) clientRequests() map[string]float64 {
	out := map[string]float64{}
	for labels, v := range mm["rest_client_requests_total"] {
		for _, l := range strings.Split(labels, ",") {
			if method, ok := strings.CutPrefix(l, "method="); ok {
				out[method] += v
			}
		}
	}
	return out
}

// settle waits until the manager has nothing left to do: its work queue
// is empty and it sent no request for quiet (requeues with a delay are
// not waited for). It returns when that began.
func (m *manager) settle(ctx context.Context, quiet time.Duration) (time.Time, error) {
	var last float64
	lastChange := time.Now()
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		mm, err := m.scrape(ctx, "rest_client_requests_total", "workqueue_depth", "controller_runtime_active_workers")
		if err != nil {
			return false, err
		}
		sent := mm.total("rest_client_requests_total")
		if sent != last {
			last, lastChange = sent, time.Now()
		}
		busy := mm.total("workqueue_depth", "name=tfjob-controller") + mm.total("controller_runtime_active_workers", "controller=tfjob-controller")
		if busy > 0 {
			lastChange = time.Now()
		}
		return time.Since(lastChange) >= quiet, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("waiting for the manager to settle: %w", err)
	}
	return lastChange, nil
}
