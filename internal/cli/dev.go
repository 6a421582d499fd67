package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/backfill-dev/backfill/internal/devcluster"
)

// newDevCommand returns `backfill dev`: the local cluster.
func newDevCommand() *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Run a local cluster with simulated CPU and GPU nodes, online services and training",
		Long: `Run a local co-location cluster on this machine, without Docker or a GPU: a
real etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
127.0.0.1, simulated CPU and GPU nodes (kwok), the backfill manager,
Prometheus with backfill's alerting rules, Alertmanager delivering to a
local webhook sink (backfill dev alerts), and a simulated dcgm-exporter,
with an online service and the example TFJobs. Only the nodes and the GPUs
are simulated.`,
	}
	dev.AddCommand(newDevUpCommand(), newDevDownCommand(), newDevStatusCommand(), newDevAlertsCommand())
	return dev
}

func newDevUpCommand() *cobra.Command {
	opts := devcluster.DefaultOptions()
	var detach bool
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the local cluster and show it live until Ctrl-C",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := completeDevOptions(&opts); err != nil {
				return err
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			if detach {
				return upDetached(cmd.Context(), opts, cmd.OutOrStdout())
			}
			return upForeground(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	addStateDirFlag(cmd, &opts.StateDir)
	f.BoolVar(&detach, "detach", false, "Return once the cluster is ready and leave it running; stop it with 'backfill dev down'.")
	f.StringVar(&opts.BinDir, "bin-dir", "", "Directory of the built tools (default: bin/ of the backfill checkout around the working directory).")
	f.IntVar(&opts.CPUNodes, "cpu-nodes", opts.CPUNodes, "Number of simulated CPU nodes.")
	f.IntVar(&opts.GPUNodes, "gpu-nodes", opts.GPUNodes, "Number of simulated GPU nodes.")
	f.IntVar(&opts.GPUsPerNode, "gpus-per-node", opts.GPUsPerNode, "nvidia.com/gpu of each GPU node.")
	f.StringVar(&opts.NodeCPU, "node-cpu", opts.NodeCPU, "CPU of each node.")
	f.StringVar(&opts.NodeMemory, "node-memory", opts.NodeMemory, "Memory of each node.")
	f.DurationVar(&opts.TrainingDuration, "training-duration", opts.TrainingDuration, "How long a simulated training replica runs before it exits 0.")
	f.BoolVar(&opts.Demo, "demo", opts.Demo, "Load the online service, whose use follows a compressed day, the example TFJobs, and a backlog of CPU training jobs that keeps arriving.")
	f.DurationVar(&opts.DayLength, "day", opts.DayLength, "How long one day of the demo's online service lasts: its use rises to a peak in the afternoon and falls at night, and reclaimed capacity follows; the GPU inference scales up from 07:00 to 21:00 of it (KEDA cron, so with GPU nodes whole minutes that divide 24h: 6m, 12m, 24m, 30m, 1h, ...).")
	f.BoolVar(&opts.Gang, "gang", opts.Gang, "Turn on Kubernetes' gang scheduling (GenericWorkload), so that distributed TFJobs start all their pods or none.")
	f.BoolVar(&opts.Kueue, "kueue", opts.Kueue, "Run Kueue with its TFJob integration on and a ready-to-use LocalQueue "+devcluster.QueueName+" in namespace "+devcluster.QueueNamespace+" (ClusterQueue "+devcluster.QueueName+": 4 GPUs, 16 CPUs, 64Gi): label a TFJob kueue.x-k8s.io/queue-name="+devcluster.QueueName+" to queue it. Builds Kueue the first time (about 5 minutes).")
	f.BoolVar(&opts.Manager, "manager", opts.Manager, "Run the backfill manager in the cluster; with --manager=false start it yourself: backfill manager --kubeconfig <the printed kubeconfig> (Prometheus scrapes its default metrics port, 8080).")
	f.BoolVar(&opts.RestartComponents, "restart-components", opts.RestartComponents, "Start etcd, kube-apiserver, kube-controller-manager, kube-scheduler or Prometheus again when it exits, with the same arguments and data (at most 5 times a minute each), instead of stopping the cluster.")
	return cmd
}

func addStateDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "state-dir", *dir, "Directory of the cluster's state: kubeconfig, logs, data.")
}

// completeDevOptions finds the checkout and bin/ when not given.
func completeDevOptions(opts *devcluster.Options) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	opts.RepoDir = devcluster.FindRepo(wd)
	if opts.BinDir == "" {
		if opts.RepoDir == "" {
			return errors.New("run `backfill dev up` inside a backfill checkout, or pass --bin-dir with the tools `make dev-tools` builds")
		}
		opts.BinDir = filepath.Join(opts.RepoDir, "bin")
	}
	opts.StateDir, err = filepath.Abs(opts.StateDir)
	return err
}

// upForeground runs the cluster and prints a live summary until ctx ends
// or a part of the cluster dies, then stops everything.
func upForeground(ctx context.Context, opts devcluster.Options, out io.Writer) error {
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	c, err := devcluster.Up(ctx, opts, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nReady. In another shell:\n  export KUBECONFIG=%s\n  kubectl get tfjobs,pods -A\nPrometheus: %s\nAlertmanager: %s (backfill dev alerts)\nCtrl-C (or `backfill dev down`) stops everything.\n\n", c.State().Kubeconfig, c.State().Prometheus, c.State().Alertmanager)
	died := c.Done()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	var runErr error
loop:
	for {
		if s, err := c.Summary(ctx); err == nil {
			fmt.Fprintln(out, s)
		}
		select {
		case <-ctx.Done():
			break loop
		case name := <-died:
			runErr = fmt.Errorf("%s exited; see %s", name, filepath.Join(opts.StateDir, "logs"))
			break loop
		case <-tick.C:
		}
	}
	fmt.Fprintln(out, "Stopping the local cluster ...")
	return errors.Join(append(c.Stop(), runErr)...)
}

// upDetached starts `dev up` as a background process of its own session,
// waits until it reports the cluster ready, and returns.
func upDetached(ctx context.Context, opts devcluster.Options, out io.Writer) error {
	if s, err := devcluster.ReadState(opts.StateDir); err == nil && s.Running() {
		return fmt.Errorf("a local cluster is already running from %s (pid %d): use `backfill dev status`, or `backfill dev down` first", opts.StateDir, s.PID)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(opts.StateDir, "up.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }() // the child holds its own descriptor
	args := slices.DeleteFunc(slices.Clone(os.Args[1:]), func(a string) bool { return a == "--detach" || a == "--detach=true" })
	if !slices.Contains(args, "--state-dir") {
		args = append(args, "--state-dir", opts.StateDir)
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting dev up in the background: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintf(out, "Starting the local cluster in the background (pid %d, log %s) ...\n", cmd.Process.Pid, logPath)

	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if s, err := devcluster.ReadState(opts.StateDir); err == nil && s.PID == cmd.Process.Pid && s.Ready {
			s.Print(out)
			return nil
		}
		select {
		case err := <-exited:
			tail, _ := os.ReadFile(logPath)
			return fmt.Errorf("dev up exited before the cluster was ready (%w):\n%s", err, tail)
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func newDevDownCommand() *cobra.Command {
	dir := devcluster.DefaultOptions().StateDir
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the local cluster and every process it started",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := devcluster.Down(dir, 2*time.Minute); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Local cluster stopped.")
			return nil
		},
	}
	addStateDirFlag(cmd, &dir)
	return cmd
}

func newDevStatusCommand() *cobra.Command {
	dir := devcluster.DefaultOptions().StateDir
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the local cluster's kubeconfig, Prometheus and Alertmanager URLs and components",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := devcluster.ReadState(dir)
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("no local cluster runs from %s: start one with `backfill dev up`", dir)
			}
			if err != nil {
				return err
			}
			if !s.Print(cmd.OutOrStdout()) {
				return errors.New("the local cluster is not healthy")
			}
			return nil
		},
	}
	addStateDirFlag(cmd, &dir)
	return cmd
}
