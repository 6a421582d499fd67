package devcluster

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/backfill-dev/backfill/internal/devcluster/alertsink"
	"github.com/backfill-dev/backfill/internal/devcluster/amconfig"
)

// Component names of the alerting path.
const (
	componentAlertmanager = "alertmanager"
	componentAlertSink    = "alert-sink"
)

// alertmanagerDir holds Alertmanager's configuration, its data and the
// notifications the sink received.
func (c *Cluster) alertmanagerDir() string {
	return filepath.Join(c.opts.StateDir, "alertmanager")
}

// startAlertSink serves the webhook receiver in this process, on a free
// loopback port, recording notifications in the state directory.
func (c *Cluster) startAlertSink(ctx context.Context) error {
	if err := os.MkdirAll(c.alertmanagerDir(), 0o755); err != nil {
		return err
	}
	port, err := c.freePorts(1)
	if err != nil {
		return err
	}
	addr := loopback(port[0])
	file := filepath.Join(c.alertmanagerDir(), "notifications.jsonl")
	srv := alertsink.NewServer(addr, file)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }() // ends with Shutdown
	c.servers = append(c.servers, srv)
	c.state.Components = append(c.state.Components, Component{Name: componentAlertSink, PID: os.Getpid(), Address: addr})
	c.state.AlertSinkFile, c.alertSinkAddr = file, addr
	return waitHTTP(ctx, "http://"+addr+alertsink.HealthPath, 30*time.Second)
}

// startAlertmanager runs Alertmanager on loopback, alone (no cluster
// peers), sending every alert to the sink.
func (c *Cluster) startAlertmanager(ctx context.Context) error {
	cfg, err := amconfig.Config("http://" + c.alertSinkAddr + alertsink.Path)
	if err != nil {
		return err
	}
	configPath := filepath.Join(c.alertmanagerDir(), "alertmanager.yml")
	if err := os.WriteFile(configPath, cfg, 0o644); err != nil {
		return err
	}
	port, err := c.freePorts(1)
	if err != nil {
		return err
	}
	addr := loopback(port[0])
	if err := c.startChild(componentAlertmanager, addr, alertmanagerArgs(configPath, filepath.Join(c.alertmanagerDir(), "data"), addr)...); err != nil {
		return err
	}
	c.amAddr = addr
	c.state.Alertmanager = "http://" + addr
	return waitHTTP(ctx, c.state.Alertmanager+"/-/ready", time.Minute)
}

// alertmanagerArgs run Alertmanager with config, its data in storage,
// listening on addr only. An empty --cluster.listen-address turns off the
// gossip port it would otherwise open on every interface.
func alertmanagerArgs(config, storage, addr string) []string {
	return []string{
		"--config.file=" + config,
		"--storage.path=" + storage,
		"--web.listen-address=" + addr,
		"--web.external-url=http://" + addr,
		"--cluster.listen-address=",
		"--log.level=warn",
	}
}
