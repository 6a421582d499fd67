package devcluster

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/backfill-dev/backfill/internal/devcluster/cgroupsim"
	"github.com/backfill-dev/backfill/internal/devcluster/promconfig"
)

// startPrometheus runs Prometheus on loopback, scraping the manager,
// kwok's kubelet-style endpoint of every node, the node agents and the GPU
// and latency simulators, evaluating backfill's alerting rules and sending
// their alerts to the local Alertmanager.
func (c *Cluster) startPrometheus(ctx context.Context) error {
	addr := c.prometheusAddress()
	dir := filepath.Join(c.opts.StateDir, "prometheus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rulesPath := filepath.Join(dir, "backfill.rules.yaml")
	if err := c.writeAlertRules(rulesPath); err != nil {
		return err
	}
	cfg, err := promconfig.Config(promconfig.Targets{
		ManagersFile:  c.managersFile(),
		Kwok:          c.kwok.Address(),
		Nodes:         c.nodeNames(),
		GPUSim:        c.componentAddress("gpu-exporter-simulator"),
		LatencySim:    c.componentAddress("online-latency-simulator"),
		NodeAgents:    c.componentAddress(componentNodeAgents),
		NodeAgentPath: cgroupsim.MetricsPath,
		Prometheus:    addr,
		RuleFiles:     []string{rulesPath},
		Alertmanager:  c.amAddr,
	})
	if err != nil {
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

// managersFile lists the metrics addresses of the managers Prometheus
// scrapes; `dev` writes it (writeManagerTargets) and anyone who starts
// managers by hand may rewrite it.
func (c *Cluster) managersFile() string {
	return filepath.Join(c.opts.StateDir, "prometheus", "managers.json")
}

// writeManagerTargets names the managers Prometheus scrapes, replacing
// the file whole so that Prometheus never reads half of it.
func writeManagerTargets(file string, addrs []string) error {
	data, err := promconfig.ManagerTargets(addrs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// WriteManagerTargets makes the Prometheus of the cluster recorded in
// state scrape the managers at addrs (host:port each), e.g. managers a
// test runs by hand next to a cluster started with --manager=false.
func WriteManagerTargets(state *State, addrs []string) error {
	return writeManagerTargets(state.ManagersFile, addrs)
}

// prometheusAddress is where Prometheus listens, chosen once: the manager,
// which starts first, reads usage from it.
func (c *Cluster) prometheusAddress() string {
	if c.promAddr == "" {
		if ports, err := c.freePorts(1); err == nil {
			c.promAddr = loopback(ports[0])
		}
	}
	return c.promAddr
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
