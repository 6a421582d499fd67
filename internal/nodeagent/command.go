package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// NewCommand returns `backfill node-agent`.
func NewCommand() *cobra.Command {
	opts := DefaultOptions()
	cmd := &cobra.Command{
		Use:   "node-agent",
		Short: "Protect online pods on this node: cap offline CPU every second, evict offline pods for memory",
		Long: `Run the node agent, one per node (the chart's DaemonSet): every --interval it
measures the node's cgroups and caps the CPU of offline pods on reclaimed
capacity at what online pods and the system leave below --cpu-threshold;
above --memory-threshold it evicts offline pods, least work lost first.
It never lowers an online pod's CPU: on a pod that is not reclaimed it only
puts back the kubelet's quota and the normal scheduling class where a
ceiling was left behind. It needs root, the host's /sys/fs/cgroup
read-write, and the host's PID namespace.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), opts)
		},
	}
	opts.bindFlags(cmd.Flags())
	return cmd
}

// Run runs the agent until ctx ends, then lifts its ceilings.
func Run(ctx context.Context, opts Options) error {
	log := manager.NewLogger(opts.LogLevel, opts.LogFormat).WithValues("node", opts.NodeName)
	fs, err := nodefs.Detect(opts.CgroupRoot, opts.KubeletCgroupRoot, opts.ProcRoot)
	if err != nil {
		return err
	}
	cfg, err := manager.RESTConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	cluster, err := NewCluster(cfg, opts.NodeName, opts.OfflinePriorityClass)
	if err != nil {
		return err
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	agent, err := New(Config{FS: fs, Pods: cluster, Settings: opts.Settings, Evictor: cluster, Registry: registry, Log: log})
	if err != nil {
		return err
	}
	log.Info("Protecting online pods", "cgroup", fs.Version, "driver", fs.Driver, "unifiedHierarchy", fs.Unified, "cpuWait", fs.WaitSource(),
		"cpus", agent.capacity/1000, "settings", opts.Settings)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { cluster.Start(ctx); return nil })
	g.Go(func() error { return agent.Run(ctx) })
	g.Go(func() error {
		return serve(ctx, opts.MetricsAddress, promhttp.HandlerFor(registry, promhttp.HandlerOpts{}), log)
	})
	g.Go(func() error { return serve(ctx, opts.HealthAddress, agent.probes(cluster), log) })
	return g.Wait()
}

// probes are /healthz (the process answers) and /readyz (it knows its
// node's pods and its last tick is recent).
func (a *Agent) probes(cluster *Cluster) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		last := a.Last().At
		switch {
		case !cluster.Synced():
			http.Error(w, "the node's pods are not listed yet", http.StatusServiceUnavailable)
		case time.Since(last) > 5*a.cfg.Settings.Interval:
			http.Error(w, fmt.Sprintf("no tick since %s", last.Format(time.RFC3339)), http.StatusServiceUnavailable)
		default:
			fmt.Fprintln(w, "ok")
		}
	})
	return mux
}

// serve serves h on addr until ctx ends; "0" or "" serves nothing.
func serve(ctx context.Context, addr string, h http.Handler, log logr.Logger) error {
	if addr == "" || addr == "0" {
		return nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("Serving", "address", l.Addr().String())
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
