package devcluster

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/backfill-dev/backfill/internal/devcluster/cgroupsim"
	"github.com/backfill-dev/backfill/internal/nodeagent"
)

// componentNodeAgents is the component of the simulated nodes' agents.
const componentNodeAgents = "node-agents"

// nodeAgentsDir holds each simulated node's cgroup tree and /proc.
const nodeAgentsDir = "node-agents"

// startNodeAgents runs the node agent, at its defaults, on every simulated
// node, each on cgroups simulated from the use its pods are given
// (package cgroupsim), and serves their metrics on one loopback port,
// each node's at its own path. The agents stop, lifting their ceilings,
// when that server shuts down.
func (c *Cluster) startNodeAgents(ctx context.Context) error {
	var nodes []cgroupsim.Node
	for _, s := range c.nodeSpecs() {
		nodes = append(nodes, cgroupsim.Node{Name: s.Name, CPUs: float64(s.CPU.MilliValue()) / 1000, SystemCPU: float64(s.SystemCPU.MilliValue()) / 1000})
	}
	// What an earlier cluster left, of nodes this one may not have.
	dir := filepath.Join(c.opts.StateDir, nodeAgentsDir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	agents, err := cgroupsim.Start(cgroupsim.Config{
		RESTConfig: c.config, Dir: dir, Nodes: nodes,
		OfflinePriorityClass: c.managerOptions("").OfflinePriorityClass,
		Settings:             nodeagent.DefaultSettings(),
		Log:                  ctrl.Log.WithName("node-agent"),
	})
	if err != nil {
		return err
	}
	var srv *http.Server
	err = c.serveSimulator(ctx, componentNodeAgents, cgroupsim.MetricsPath(nodes[0].Name), func(addr string) *http.Server {
		srv = &http.Server{Addr: addr, Handler: agents.Handler(), ReadHeaderTimeout: 10 * time.Second}
		srv.RegisterOnShutdown(agents.Stop)
		return srv
	})
	if err != nil && !slices.Contains(c.servers, srv) {
		agents.Stop() // no server to stop them with
	}
	return err
}
