//go:build integration

package reclaim

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/backfill-dev/backfill/internal/devcluster/process"
	"github.com/backfill-dev/backfill/test/framework"
)

// prometheus is a bin/prometheus the suite runs, and can stop and start
// again on the same address and data.
type prometheus struct {
	dir, addr, url string
	proc           *process.Process
}

// nodeNames are the nodes the suite's Prometheus scrapes, one kubelet
// resource endpoint each, as kube-prometheus-stack labels them (node).
var nodeNames = []string{"reclaim-0", "reclaim-1", "reclaim-2"}

// startPrometheus writes a configuration scraping kwok's kubelet metrics of
// every node, the manager and the online service's latency (honor_labels,
// as the chart's ServiceMonitor and a PodMonitor have it), and starts
// Prometheus on a free loopback port.
func startPrometheus(dir, kwok, manager, online string) (*prometheus, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	p := &prometheus{dir: dir, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	p.url = "http://" + p.addr
	config := fmt.Sprintf("global:\n  scrape_interval: %s\n  scrape_timeout: %s\nscrape_configs:\n", scrapeInterval, scrapeInterval)
	config += fmt.Sprintf("- job_name: backfill-manager\n  honor_labels: true\n  static_configs:\n  - targets: [%q]\n", manager)
	config += fmt.Sprintf("- job_name: online-service\n  honor_labels: true\n  static_configs:\n  - targets: [%q]\n", online)
	config += "- job_name: kubelet-resource\n  honor_labels: true\n  static_configs:\n"
	for _, n := range nodeNames {
		config += fmt.Sprintf("  - targets: [%q]\n    labels: {__metrics_path__: /metrics/nodes/%s/metrics/resource, node: %s}\n", kwok, n, n)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	return p, p.start()
}

// start runs Prometheus and waits until it is ready.
func (p *prometheus) start() error {
	proc, err := process.Start(filepath.Join(framework.BinDir(), "prometheus"), []string{
		"--config.file=" + filepath.Join(p.dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(p.dir, "data"),
		"--web.listen-address=" + p.addr,
	}, nil, filepath.Join(p.dir, "prometheus.log"))
	if err != nil {
		return err
	}
	p.proc = proc
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/-/ready", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("prometheus not ready on %s (see %s)", p.addr, proc.LogPath())
		case <-proc.Done():
			return fmt.Errorf("prometheus exited (see %s)", proc.LogPath())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop stops Prometheus by its PID.
func (p *prometheus) stop() error {
	if p.proc == nil {
		return nil
	}
	err := p.proc.Stop(10 * time.Second)
	p.proc = nil
	return err
}
