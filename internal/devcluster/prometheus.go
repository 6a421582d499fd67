package devcluster

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/backfill-dev/backfill/internal/devcluster/process"
	"github.com/backfill-dev/backfill/internal/devcluster/promconfig"
)

// startPrometheus runs Prometheus on loopback, scraping the manager,
// kwok's kubelet-style endpoint of every node and the GPU simulator.
func (c *Cluster) startPrometheus(ctx context.Context) error {
	port, err := process.FreePorts(1)
	if err != nil {
		return err
	}
	addr := loopback(port[0])
	cfg, err := promconfig.Config(promconfig.Targets{
		Manager:    c.managerMetricsAddress(),
		Kwok:       c.kwok.Address(),
		Nodes:      c.nodeNames(),
		GPUSim:     c.componentAddress("gpu-exporter-simulator"),
		Prometheus: addr,
	})
	if err != nil {
		return err
	}
	dir := filepath.Join(c.opts.StateDir, "prometheus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, cfg, 0o644); err != nil {
		return err
	}
	if err := c.startChild("prometheus", addr,
		"--config.file="+configPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--storage.tsdb.retention.time=1d",
		"--log.level=warn",
	); err != nil {
		return err
	}
	c.state.Prometheus = "http://" + addr
	return waitHTTP(ctx, c.state.Prometheus+"/-/ready", time.Minute)
}

// componentAddress is the recorded address of a component.
func (c *Cluster) componentAddress(name string) string {
	for _, comp := range c.state.Components {
		if comp.Name == name {
			return comp.Address
		}
	}
	return ""
}
